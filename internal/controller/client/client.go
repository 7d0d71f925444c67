// Package client is what a broker in controller mode uses to talk to the
// controller group: it finds the leader among controllerAddr, follows
// leader changes (CONTROLLER_NOT_LEADER answers and
// CONTROLLER_GET_METADATA_INFO), and offers the broker's requests with
// typed results.
package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Client talks to a controller group. It is safe for concurrent use.
type Client struct {
	rc    *remoting.Client
	owned bool
	addrs []string

	mu     sync.Mutex
	leader string // last known leader's client address
}

// New returns a client for controllerAddr ("host:port;host:port"). rc
// may be shared with the broker's other traffic; nil makes one that
// Close closes.
func New(controllerAddr string, rc *remoting.Client) (*Client, error) {
	var addrs []string
	for _, a := range strings.Split(controllerAddr, ";") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 {
		return nil, errors.New("controller client: controllerAddr is empty")
	}
	c := &Client{rc: rc, addrs: addrs}
	if rc == nil {
		c.rc = remoting.NewClient(remoting.ClientConfig{})
		c.owned = true
	}
	return c, nil
}

// Addrs returns the controller addresses, ';'-separated.
func (c *Client) Addrs() string { return strings.Join(c.addrs, ";") }

// Close closes the remoting client when the Client made it.
func (c *Client) Close() error {
	if c.owned {
		return c.rc.Close()
	}
	return nil
}

// StatusError is a controller's answer other than SUCCESS: Java's code and
// remark.
type StatusError struct {
	Code   int32
	Remark string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("controller: code %d: %s", e.Code, e.Remark)
}

// Code returns the response code of err when it is a *StatusError, else -1.
func Code(err error) int32 {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return -1
}

// Metadata is CONTROLLER_GET_METADATA_INFO's answer.
type Metadata = protocol.GetMetaDataResponseHeader

// GetMetadata asks the controller at addr who leads.
func (c *Client) GetMetadata(ctx context.Context, addr string) (*Metadata, error) {
	resp, err := c.rc.Invoke(ctx, addr, remoting.NewRequest(protocol.ControllerGetMetadataInfo, nil, nil))
	if err != nil {
		return nil, err
	}
	if resp.Code != protocol.Success {
		return nil, &StatusError{resp.Code, resp.Remark}
	}
	var h Metadata
	if err := h.Decode(resp.Ext()); err != nil {
		return nil, err
	}
	return &h, nil
}

// Leader returns the leader's address, asking the controllers in turn
// when none is known.
func (c *Client) Leader(ctx context.Context) (string, error) {
	c.mu.Lock()
	l := c.leader
	c.mu.Unlock()
	if l != "" {
		return l, nil
	}
	var errs []error
	for _, a := range c.addrs {
		md, err := c.GetMetadata(ctx, a)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", a, err))
			continue
		}
		if md.ControllerLeaderAddress != "" {
			c.setLeader(md.ControllerLeaderAddress)
			return md.ControllerLeaderAddress, nil
		}
		errs = append(errs, fmt.Errorf("%s: no leader known", a))
	}
	return "", fmt.Errorf("controller client: no leader among %v: %w", c.addrs, errors.Join(errs...))
}

func (c *Client) setLeader(a string) {
	c.mu.Lock()
	c.leader = a
	c.mu.Unlock()
}

// retryPause is the wait between attempts while the group elects a leader.
const retryPause = 100 * time.Millisecond

// invoke sends req to the leader, following CONTROLLER_NOT_LEADER answers
// and lost connections to the new leader until ctx ends. It returns the
// SUCCESS response or a *StatusError.
func (c *Client) invoke(ctx context.Context, code int32, h interface{ AppendExt(map[string]string) }, body []byte) (*remoting.Command, error) {
	var last error
	for {
		addr, err := c.Leader(ctx)
		if err == nil {
			var ext map[string]string
			if h != nil {
				ext = protocol.Ext(h)
			}
			var resp *remoting.Command
			resp, err = c.rc.Invoke(ctx, addr, remoting.NewRequest(code, ext, body))
			switch {
			case err != nil:
				c.setLeader("")
			case resp.Code == protocol.ControllerNotLeader:
				c.setLeader(resp.ExtField("controllerLeaderAddress"))
				err = &StatusError{resp.Code, resp.Remark}
			case resp.Code != protocol.Success:
				return resp, &StatusError{resp.Code, resp.Remark}
			default:
				return resp, nil
			}
		}
		last = err
		t := time.NewTimer(retryPause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("controller client: %w (last: %v)", ctx.Err(), last)
		case <-t.C:
		}
	}
}

// GetNextBrokerID asks for the id a new broker of the set should apply for.
func (c *Client) GetNextBrokerID(ctx context.Context, cluster, brokerName string) (int64, error) {
	resp, err := c.invoke(ctx, protocol.ControllerGetNextBrokerID, &protocol.BrokerSetHeader{ClusterName: cluster, BrokerName: brokerName}, nil)
	if err != nil {
		return 0, err
	}
	var h protocol.GetNextBrokerIDResponseHeader
	if err := h.Decode(resp.Ext()); err != nil {
		return 0, err
	}
	return h.NextBrokerID.Value, nil
}

// ApplyBrokerID claims id for the broker; checkCode is "brokerAddr;timestamp"
// and must be the same when the broker applies again.
func (c *Client) ApplyBrokerID(ctx context.Context, cluster, brokerName string, id int64, checkCode string) error {
	_, err := c.invoke(ctx, protocol.ControllerApplyBrokerID, &protocol.ApplyBrokerIDRequestHeader{ClusterName: cluster,
		BrokerName: brokerName, AppliedBrokerID: id, RegisterCheckCode: checkCode}, nil)
	return err
}

// MasterInfo is the master of a broker set as a controller answer gives it.
type MasterInfo struct {
	HasMaster         bool
	MasterBrokerID    int64
	MasterAddress     string
	MasterEpoch       int32
	SyncStateSetEpoch int32
	SyncStateSet      []int64
}

func masterInfo(resp *remoting.Command) (*MasterInfo, error) {
	var h protocol.MasterInfoHeader
	if err := h.Decode(resp.Ext()); err != nil {
		return nil, err
	}
	mi := &MasterInfo{HasMaster: h.MasterBrokerID.Set, MasterBrokerID: h.MasterBrokerID.Value, MasterAddress: h.MasterAddress,
		MasterEpoch: h.MasterEpoch.Value, SyncStateSetEpoch: h.SyncStateSetEpoch.Value}
	if len(resp.Body) > 0 {
		var ss struct {
			SyncStateSet      []int64 `json:"syncStateSet"`
			SyncStateSetEpoch int32   `json:"syncStateSetEpoch"`
		}
		if err := protocol.UnmarshalFastJSON(resp.Body, &ss); err != nil {
			return nil, fmt.Errorf("controller client: body: %w", err)
		}
		mi.SyncStateSet = ss.SyncStateSet
		if !h.SyncStateSetEpoch.Set {
			mi.SyncStateSetEpoch = ss.SyncStateSetEpoch
		}
	}
	return mi, nil
}

// RegisterBroker registers the broker with its id and address; the answer
// names the master when it is alive, and the SyncStateSet.
func (c *Client) RegisterBroker(ctx context.Context, cluster, brokerName string, id int64, addr string) (*MasterInfo, error) {
	resp, err := c.invoke(ctx, protocol.ControllerRegisterBroker, &protocol.RegisterBrokerToControllerRequestHeader{ClusterName: cluster,
		BrokerName: brokerName, BrokerID: id, BrokerAddress: addr, InvokeTime: time.Now().UnixMilli()}, nil)
	if err != nil {
		return nil, err
	}
	return masterInfo(resp)
}

// ElectMaster asks for an election in the set; id is the asking broker
// (or, with designate, the broker an admin wants as master). The answer of
// CONTROLLER_MASTER_STILL_EXIST comes back with its MasterInfo and the
// *StatusError.
func (c *Client) ElectMaster(ctx context.Context, cluster, brokerName string, id int64, designate bool) (*MasterInfo, error) {
	resp, err := c.invoke(ctx, protocol.ControllerElectMaster, &protocol.ElectMasterRequestHeader{ClusterName: cluster,
		BrokerName: brokerName, BrokerID: id, DesignateElect: designate, InvokeTime: time.Now().UnixMilli()}, nil)
	if err != nil && Code(err) != protocol.ControllerMasterStillExist {
		return nil, err
	}
	mi, derr := masterInfo(resp)
	if derr != nil {
		return nil, derr
	}
	return mi, err
}

// GetReplicaInfo returns the set's master and SyncStateSet.
func (c *Client) GetReplicaInfo(ctx context.Context, brokerName string) (*MasterInfo, error) {
	resp, err := c.invoke(ctx, protocol.ControllerGetReplicaInfo, &protocol.BrokerNameHeader{BrokerName: brokerName}, nil)
	if err != nil {
		return nil, err
	}
	return masterInfo(resp)
}

// AlterSyncStateSet asks, as master masterID at masterEpoch, to change the
// SyncStateSet of epoch ssEpoch to ids; it returns the new epoch.
func (c *Client) AlterSyncStateSet(ctx context.Context, brokerName string, masterID int64, masterEpoch int32, ids []int64, ssEpoch int32) (int32, error) {
	body, err := protocol.MarshalFastJSON(&protocol.SyncStateSet{SyncStateSet: ids, SyncStateSetEpoch: ssEpoch})
	if err != nil {
		return 0, err
	}
	resp, err := c.invoke(ctx, protocol.ControllerAlterSyncStateSet, &protocol.AlterSyncStateSetRequestHeader{BrokerName: brokerName,
		MasterBrokerID: masterID, MasterEpoch: masterEpoch, InvokeTime: time.Now().UnixMilli()}, body)
	if err != nil {
		return 0, err
	}
	var h protocol.AlterSyncStateSetResponseHeader
	if err := h.Decode(resp.Ext()); err != nil {
		return 0, err
	}
	return h.NewSyncStateSetEpoch, nil
}

// Heartbeat is what a broker reports with each heartbeat.
type Heartbeat struct {
	ClusterName, BrokerName, BrokerAddr string
	BrokerID                            int64
	Epoch                               int32
	MaxOffset, ConfirmOffset            int64
	Timeout                             time.Duration
	ElectionPriority                    int32
}

// SendHeartbeat sends hb to every controller in parallel, as Java's
// brokers do (each node keeps its own liveness table), so that a stopped
// controller does not hold back the others. It returns how many took it
// and the failures joined (nil when every controller took it).
func (c *Client) SendHeartbeat(ctx context.Context, hb Heartbeat) (delivered int, err error) {
	h := &protocol.BrokerHeartbeatRequestHeader{ClusterName: hb.ClusterName, BrokerAddr: hb.BrokerAddr, BrokerName: hb.BrokerName,
		BrokerID: protocol.Some(hb.BrokerID), Epoch: protocol.Some(hb.Epoch), MaxOffset: protocol.Some(hb.MaxOffset),
		ConfirmOffset: protocol.Some(hb.ConfirmOffset), HeartbeatTimeoutMills: protocol.Some(hb.Timeout.Milliseconds()),
		ElectionPriority: protocol.Some(hb.ElectionPriority)}
	errs := make([]error, len(c.addrs))
	var wg sync.WaitGroup
	for i, a := range c.addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.rc.Invoke(ctx, a, remoting.NewRequest(protocol.BrokerHeartbeat, protocol.Ext(h), nil))
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("%s: %w", a, err)
			case resp.Code != protocol.Success:
				errs[i] = fmt.Errorf("%s: %w", a, &StatusError{resp.Code, resp.Remark})
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e == nil {
			delivered++
		}
	}
	return delivered, errors.Join(errs...)
}

// GetSyncStateData returns the replicas of brokerName: the master, and the
// members in and out of the SyncStateSet with their addresses
// (CONTROLLER_GET_SYNC_STATE_DATA). ok is false when the controller knows
// no such set.
func (c *Client) GetSyncStateData(ctx context.Context, brokerName string) (info protocol.ReplicasInfo, ok bool, err error) {
	body, err := protocol.MarshalFastJSON([]string{brokerName})
	if err != nil {
		return info, false, err
	}
	resp, err := c.invoke(ctx, protocol.ControllerGetSyncStateData, nil, body)
	if err != nil {
		return info, false, err
	}
	var out protocol.BrokerReplicasInfo
	if len(resp.Body) > 0 {
		if err := protocol.UnmarshalFastJSON(resp.Body, &out); err != nil {
			return info, false, fmt.Errorf("controller client: body: %w", err)
		}
	}
	info, ok = out.ReplicasInfoTable[brokerName]
	return info, ok, nil
}
