package metrics

import (
	"slices"
	"strconv"
	"strings"

	"github.com/rocketd/rocketd/internal/protocol"
)

// codeName is one code and Java's label for it.
type codeName struct {
	code int32
	name string
}

// responseCodes are Java's ResponseCode and RemotingSysResponseCode
// constants, sorted by code, named as rocketmq_rpc_latency labels them
// (RemotingHelper.getResponseCodeDesc: the constant's name in lower case).
var responseCodes = []codeName{
	{-1006, "rpc_time_out"}, {-1004, "rpc_send_to_channel_failed"}, {-1002, "rpc_addr_is_null"}, {-1000, "rpc_unknown"},
	{0, "success"}, {1, "system_error"}, {2, "system_busy"}, {3, "request_code_not_supported"}, {4, "transaction_failed"},
	{10, "flush_disk_timeout"}, {11, "slave_not_available"}, {12, "flush_slave_timeout"}, {13, "message_illegal"},
	{14, "service_not_available"}, {15, "version_not_supported"}, {16, "no_permission"}, {17, "topic_not_exist"},
	{18, "topic_exist_already"}, {19, "pull_not_found"}, {20, "pull_retry_immediately"}, {21, "pull_offset_moved"},
	{22, "query_not_found"}, {23, "subscription_parse_failed"}, {24, "subscription_not_exist"},
	{25, "subscription_not_latest"}, {26, "subscription_group_not_exist"}, {27, "filter_data_not_exist"},
	{28, "filter_data_not_latest"}, {29, "invalid_parameter"}, {200, "transaction_should_commit"},
	{201, "transaction_should_rollback"}, {202, "transaction_state_unknow"}, {203, "transaction_state_group_wrong"},
	{204, "no_buyer_id"}, {205, "not_in_current_unit"}, {206, "consumer_not_online"}, {207, "consume_msg_timeout"},
	{208, "no_message"}, {209, "polling_full"}, {210, "polling_timeout"}, {211, "broker_not_exist"},
	{212, "broker_dispatch_not_complete"}, {213, "broadcast_consumption"}, {215, "flow_control"},
	{501, "not_leader_for_queue"}, {604, "illegal_operation"}, {1500, "go_away"},
	{2000, "controller_fenced_master_epoch"}, {2001, "controller_fenced_sync_state_set_epoch"},
	{2002, "controller_invalid_master"}, {2003, "controller_invalid_replicas"},
	{2004, "controller_master_not_available"}, {2005, "controller_invalid_request"},
	{2006, "controller_broker_not_alive"}, {2007, "controller_not_leader"},
	{2008, "controller_broker_metadata_not_exist"}, {2009, "controller_invalid_clean_broker_metadata"},
	{2010, "controller_broker_need_to_be_registered"}, {2011, "controller_master_still_exist"},
	{2012, "controller_elect_master_failed"}, {2013, "controller_alter_sync_state_set_failed"},
	{2014, "controller_broker_id_invalid"}, {2015, "controller_jraft_internal_error"},
	{2016, "controller_broker_live_info_not_exists"}, {3001, "user_not_exist"}, {3002, "policy_not_exist"},
}

// requestCodes are Java's request codes (protocol.RequestCodeMap), sorted,
// labelled as RemotingHelper.getRequestCodeDesc does.
func requestCodes() []codeName {
	out := make([]codeName, 0, len(protocol.RequestCodeMap))
	for _, r := range protocol.RequestCodeMap {
		out = append(out, codeName{r.Code, strings.ToLower(r.Name)})
	}
	slices.SortFunc(out, func(a, b codeName) int { return int(a.code) - int(b.code) })
	return out
}

// codeIndex finds code in the sorted table: its index, or len(table) for
// a code Java does not know. Allocation-free (the request path).
func codeIndex(table []codeName, code int32) int {
	lo, hi := 0, len(table)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if table[m].code < code {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(table) && table[lo].code == code {
		return lo
	}
	return len(table)
}

// otherCode labels every code not in a table. Java labels such a code with
// its number; rocketd pools them so that a client sending random codes
// cannot grow the series without bound.
const otherCode = "other"

func codeLabel(table []codeName, i int) string {
	if i < len(table) {
		return table[i].name
	}
	return otherCode
}

// itoa is strconv.Itoa for the int32 labels.
func itoa(v int32) string { return strconv.Itoa(int(v)) }
