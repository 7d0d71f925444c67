// Package admin is a typed RocketMQ admin client, the calls mqadmin and
// rocketmq-dashboard make through MQAdminExt: it asks the NameServer(s) for
// the cluster and routes, then the brokers, over internal/remoting with
// internal/protocol's headers and bodies. It holds no state beyond the
// remoting connections; every call takes a context whose deadline bounds
// it (Config.Timeout when the context has none).
//
// Calls and the request codes they send:
//
//	ClusterInfo            GET_BROKER_CLUSTER_INFO (106) to a NameServer
//	TopicList              GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206)
//	TopicRoute             GET_ROUTEINFO_BY_TOPIC (105)
//	TopicStats             GET_TOPIC_STATS_INFO (202) to each master of the route
//	CreateTopic            UPDATE_AND_CREATE_TOPIC (17) to each master of a cluster
//	Groups                 GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) to each master
//	ConsumeStats           GET_CONSUME_STATS (208) to each master
//	ConsumerConnections    GET_CONSUMER_CONNECTION_LIST (203) to each master
//	TopicConsumers         QUERY_TOPIC_CONSUME_BY_WHO (300) to each master of the route
//	ResetOffsetByTime      INVOKE_BROKER_TO_RESET_OFFSET (222), isForce, to each master of the route
//	QueryMessageByKey      QUERY_MESSAGE (12) to each master, filtered by KEYS as Java's client does
//	ViewMessage            VIEW_MESSAGE_BY_ID (33) for an offset message id, else QUERY_MESSAGE by UNIQ_KEY
//	MessageAt              QUERY_CONSUME_QUEUE (321) then VIEW_MESSAGE_BY_ID (33)
//	QueueMessages          QUERY_CONSUME_QUEUE (321) then VIEW_MESSAGE_BY_ID per unit
//	ConsumeMessageDirectly CONSUME_MESSAGE_DIRECTLY (309): the dashboard's DLQ re-send
//	BrokerRuntimeInfo      GET_BROKER_RUNTIME_INFO (28)
//	QueueOffsets           GET_MIN_OFFSET (31) and GET_MAX_OFFSET (30)
//	BrokerTopicStats       GET_TOPIC_STATS_INFO (202) to one broker
//	DelayOffsets           GET_ALL_DELAY_OFFSET (45)
//	ConsumerOffset         QUERY_CONSUMER_OFFSET (14)
//
// A response other than SUCCESS is a *StatusError carrying the code and
// the broker's remark; transport failures are errors naming the address.
package admin
