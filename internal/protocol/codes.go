package protocol

// RequestCode is the `code` of a remoting request (rocketmq-spec.md §2.1).
// Values are fixed by the wire protocol: do not change them.
type RequestCode = int32

// Request codes served by the broker (B), the NameServer (N), or sent by the
// broker to a client (C).
const (
	SendMessage                          RequestCode = 10  // B
	PullMessage                          RequestCode = 11  // B
	QueryMessage                         RequestCode = 12  // B
	QueryBrokerOffset                    RequestCode = 13  // B (unused)
	QueryConsumerOffset                  RequestCode = 14  // B
	UpdateConsumerOffset                 RequestCode = 15  // B
	UpdateAndCreateTopic                 RequestCode = 17  // B
	UpdateAndCreateTopicList             RequestCode = 18  // B (5.x)
	GetAllTopicConfig                    RequestCode = 21  // B
	GetTopicConfigList                   RequestCode = 22  // B
	GetTopicNameList                     RequestCode = 23  // B
	UpdateBrokerConfig                   RequestCode = 25  // B
	GetBrokerConfig                      RequestCode = 26  // B
	TriggerDeleteFiles                   RequestCode = 27  // B
	GetBrokerRuntimeInfo                 RequestCode = 28  // B
	SearchOffsetByTimestamp              RequestCode = 29  // B
	GetMaxOffset                         RequestCode = 30  // B
	GetMinOffset                         RequestCode = 31  // B
	GetEarliestMsgStoretime              RequestCode = 32  // B
	ViewMessageByID                      RequestCode = 33  // B
	HeartBeat                            RequestCode = 34  // B
	UnregisterClient                     RequestCode = 35  // B
	ConsumerSendMsgBack                  RequestCode = 36  // B
	EndTransaction                       RequestCode = 37  // B
	GetConsumerListByGroup               RequestCode = 38  // B
	CheckTransactionState                RequestCode = 39  // C
	NotifyConsumerIdsChanged             RequestCode = 40  // C
	LockBatchMQ                          RequestCode = 41  // B
	UnlockBatchMQ                        RequestCode = 42  // B
	GetAllConsumerOffset                 RequestCode = 43  // B
	GetAllDelayOffset                    RequestCode = 45  // B
	CheckClientConfig                    RequestCode = 46  // B
	GetClientConfig                      RequestCode = 47  // B (5.x)
	GetTimerCheckPoint                   RequestCode = 60  // B (5.x)
	GetTimerMetrics                      RequestCode = 61  // B (5.x)
	PutKVConfig                          RequestCode = 100 // N
	GetKVConfig                          RequestCode = 101 // N
	DeleteKVConfig                       RequestCode = 102 // N
	RegisterBroker                       RequestCode = 103 // N
	UnregisterBroker                     RequestCode = 104 // N
	GetRouteinfoByTopic                  RequestCode = 105 // N
	GetBrokerClusterInfo                 RequestCode = 106 // N
	UpdateAndCreateSubscriptionGroup     RequestCode = 200 // B
	GetAllSubscriptionGroupConfig        RequestCode = 201 // B
	GetTopicStatsInfo                    RequestCode = 202 // B
	GetConsumerConnectionList            RequestCode = 203 // B
	GetProducerConnectionList            RequestCode = 204 // B
	WipeWritePermOfBroker                RequestCode = 205 // N
	GetAllTopicListFromNameserver        RequestCode = 206 // N
	DeleteSubscriptionGroup              RequestCode = 207 // B
	GetConsumeStats                      RequestCode = 208 // B
	DeleteTopicInBroker                  RequestCode = 215 // B
	DeleteTopicInNamesrv                 RequestCode = 216 // N
	RegisterTopicInNamesrv               RequestCode = 217 // N (5.x)
	GetKVListByNamespace                 RequestCode = 219 // N
	ResetConsumerClientOffset            RequestCode = 220 // C
	GetConsumerStatusFromClient          RequestCode = 221 // C
	InvokeBrokerToResetOffset            RequestCode = 222 // B
	InvokeBrokerToGetConsumerStatus      RequestCode = 223 // B
	GetTopicsByCluster                   RequestCode = 224 // N
	UpdateAndCreateSubscriptionGroupList RequestCode = 225 // B (5.x)
	QueryTopicConsumeByWho               RequestCode = 300 // B
	QueryConsumeTimeSpan                 RequestCode = 303 // B
	GetSystemTopicListFromNS             RequestCode = 304 // N
	GetSystemTopicListFromBroker         RequestCode = 305 // B
	CleanExpiredConsumequeue             RequestCode = 306 // B
	GetConsumerRunningInfo               RequestCode = 307 // B and C
	QueryCorrectionOffset                RequestCode = 308 // B
	ConsumeMessageDirectly               RequestCode = 309 // B and C
	SendMessageV2                        RequestCode = 310 // B
	GetUnitTopicList                     RequestCode = 311 // N
	GetHasUnitSubTopicList               RequestCode = 312 // N
	GetHasUnitSubUnunitTopicList         RequestCode = 313 // N
	CloneGroupOffset                     RequestCode = 314 // B
	ViewBrokerStatsData                  RequestCode = 315 // B
	CleanUnusedTopic                     RequestCode = 316 // B
	GetBrokerConsumeStats                RequestCode = 317 // B
	UpdateNamesrvConfig                  RequestCode = 318 // N
	GetNamesrvConfig                     RequestCode = 319 // N
	SendBatchMessage                     RequestCode = 320 // B
	QueryConsumeQueue                    RequestCode = 321 // B
	QueryDataVersion                     RequestCode = 322 // N
	ResumeCheckHalfMessage               RequestCode = 323 // B
	SendReplyMessage                     RequestCode = 324 // B
	SendReplyMessageV2                   RequestCode = 325 // B
	PushReplyMessageToClient             RequestCode = 326 // C
	AddWritePermOfBroker                 RequestCode = 327 // N
	GetAllProducerInfo                   RequestCode = 328 // B
	DeleteExpiredCommitlog               RequestCode = 329 // B
	QueryTopicsByConsumer                RequestCode = 343 // B
	QuerySubscriptionByConsumer          RequestCode = 345 // B
	GetSubscriptionGroupConfig           RequestCode = 352 // B
	GetTopicConfig                       RequestCode = 351 // B (5.x)
	UpdateAndGetGroupForbidden           RequestCode = 353 // B (5.x)
	LitePullMessage                      RequestCode = 361 // B (5.x client)
	RecallMessage                        RequestCode = 370 // B (5.3.x)
	QueryAssignment                      RequestCode = 400 // B (5.x)
	SetMessageRequestMode                RequestCode = 401 // B (5.x)
	GetAllMessageRequestMode             RequestCode = 402 // B (5.x)
	UpdateAndCreateStaticTopic           RequestCode = 513 // B (5.x)
)

// The 5.x HA admin code (a block of its own, as the auth one below).
const GetBrokerHAStatus RequestCode = 907 // B (5.x)

// The controller codes of RocketMQ 5.x's controller mode (internal/controller
// serves them; BROKER_HEARTBEAT is also a NameServer code in Java).
const (
	BrokerHeartbeat             RequestCode = 904  // controller
	ControllerAlterSyncStateSet RequestCode = 1001 // controller
	ControllerElectMaster       RequestCode = 1002 // controller
	ControllerRegisterBroker    RequestCode = 1003 // controller
	ControllerGetReplicaInfo    RequestCode = 1004 // controller
	ControllerGetMetadataInfo   RequestCode = 1005 // controller
	ControllerGetSyncStateData  RequestCode = 1006 // controller
	GetBrokerEpochCache         RequestCode = 1007 // B (controller mode)
	NotifyBrokerRoleChanged     RequestCode = 1008 // B (the controller sends it)
	UpdateControllerConfig      RequestCode = 1009 // controller
	GetControllerConfig         RequestCode = 1010 // controller
	CleanBrokerData             RequestCode = 1011 // controller
	ControllerGetNextBrokerID   RequestCode = 1012 // controller
	ControllerApplyBrokerID     RequestCode = 1013 // controller
)

// The POP consumption codes of RocketMQ 5.x (a block of their own: they
// do not fit the int16 of the ROCKETMQ serialization).
const (
	PopMessage                 RequestCode = 200050 // B (5.x)
	AckMessage                 RequestCode = 200051 // B (5.x)
	PeekMessage                RequestCode = 200052 // B (5.x)
	ChangeMessageInvisibleTime RequestCode = 200053 // B (5.x)
	Notification               RequestCode = 200054 // B (5.x)
	PollingInfo                RequestCode = 200055 // B (5.x)
	PopRollback                RequestCode = 200056 // B (5.x)
	BatchAckMessage            RequestCode = 200151 // B (5.x)
)

// The user and ACL admin codes of RocketMQ 5.3's auth module (a block of their
// own: the wider numbers would realign the one above).
const (
	AuthCreateUser RequestCode = 3001 // B
	AuthUpdateUser RequestCode = 3002 // B
	AuthDeleteUser RequestCode = 3003 // B
	AuthGetUser    RequestCode = 3004 // B
	AuthListUser   RequestCode = 3005 // B
	AuthCreateACL  RequestCode = 3006 // B
	AuthUpdateACL  RequestCode = 3007 // B
	AuthDeleteACL  RequestCode = 3008 // B
	AuthGetACL     RequestCode = 3009 // B
	AuthListACL    RequestCode = 3010 // B
)

// ResponseCode is the `code` of a remoting response (rocketmq-spec.md §2.2).
type ResponseCode = int32

const (
	Success                    ResponseCode = 0
	SystemError                ResponseCode = 1
	SystemBusy                 ResponseCode = 2
	RequestCodeNotSupported    ResponseCode = 3
	TransactionFailed          ResponseCode = 4
	FlushDiskTimeout           ResponseCode = 10
	SlaveNotAvailable          ResponseCode = 11
	FlushSlaveTimeout          ResponseCode = 12
	MessageIllegal             ResponseCode = 13
	ServiceNotAvailable        ResponseCode = 14
	VersionNotSupported        ResponseCode = 15
	NoPermission               ResponseCode = 16
	TopicNotExist              ResponseCode = 17
	TopicExistAlready          ResponseCode = 18
	PullNotFound               ResponseCode = 19
	PullRetryImmediately       ResponseCode = 20
	PullOffsetMoved            ResponseCode = 21
	QueryNotFound              ResponseCode = 22
	SubscriptionParseFailed    ResponseCode = 23
	SubscriptionNotExist       ResponseCode = 24
	SubscriptionNotLatest      ResponseCode = 25
	SubscriptionGroupNotExist  ResponseCode = 26
	FilterDataNotExist         ResponseCode = 27
	FilterDataNotLatest        ResponseCode = 28
	InvalidParameter           ResponseCode = 29 // 5.x
	TransactionShouldCommit    ResponseCode = 200
	TransactionShouldRollback  ResponseCode = 201
	TransactionStateUnknow     ResponseCode = 202
	TransactionStateGroupWrong ResponseCode = 203
	NoBuyerID                  ResponseCode = 204
	NotInCurrentUnit           ResponseCode = 205
	ConsumerNotOnline          ResponseCode = 206
	ConsumeMsgTimeout          ResponseCode = 207
	NoMessage                  ResponseCode = 208
	PollingFull                ResponseCode = 209 // 5.x POP
	PollingTimeout             ResponseCode = 210 // 5.x POP
	FlowControl                ResponseCode = 215
	NotLeaderForQueue          ResponseCode = 501 // 5.x static topics
	IllegalOperation           ResponseCode = 604 // 5.x (recall)
)

// The controller's response codes (Java's ResponseCode 2000-2016).
const (
	ControllerFencedMasterEpoch          ResponseCode = 2000
	ControllerFencedSyncStateSetEpoch    ResponseCode = 2001
	ControllerInvalidMaster              ResponseCode = 2002
	ControllerInvalidReplicas            ResponseCode = 2003
	ControllerMasterNotAvailable         ResponseCode = 2004
	ControllerInvalidRequest             ResponseCode = 2005
	ControllerBrokerNotAlive             ResponseCode = 2006
	ControllerNotLeader                  ResponseCode = 2007
	ControllerBrokerMetadataNotExist     ResponseCode = 2008
	ControllerInvalidCleanBrokerMetadata ResponseCode = 2009
	ControllerBrokerNeedToBeRegistered   ResponseCode = 2010
	ControllerMasterStillExist           ResponseCode = 2011
	ControllerElectMasterFailed          ResponseCode = 2012
	ControllerAlterSyncStateSetFailed    ResponseCode = 2013
	ControllerBrokerIDInvalid            ResponseCode = 2014
	ControllerJRaftInternalError         ResponseCode = 2015
	ControllerBrokerLiveInfoNotExists    ResponseCode = 2016
)

// MQVersion ordinals that change behaviour (rocketmq-spec.md §1.8).
const (
	VersionV3_0_11 int32 = 37
	VersionV3_4_9  int32 = 121
	VersionV4_9_4  int32 = 401
	VersionV4_9_8  int32 = 409
	VersionV5_0_0  int32 = 413
	VersionV5_3_3  int32 = 479
	CurrentVersion       = VersionV4_9_8 // what rocketd puts in requests it sends
)
