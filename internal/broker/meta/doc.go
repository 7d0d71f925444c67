// Package meta holds the broker's metadata tables and their JSON files:
// topic configs (Topics), subscription groups (Groups), consumer offsets
// (Offsets) and delay-level progress (DelayOffsets); Tables bundles them for
// the broker controller (Open, Start, Close). Processors and the controller
// share them; every table is safe for concurrent use and readers never wait
// for file I/O (a persist snapshots under the table lock and writes after
// releasing it). Names, the PermName bits and the system-topic rules of
// rocketmq-spec.md §14 are here too (ValidateTopic, SendForbidden,
// IsReadable, RetryTopic, ...).
//
// # Files
//
// All four live in <storePathRootDir>/config (ConfigDir) and are byte
// compatible with Apache RocketMQ 4.9.x, so a store directory can move
// between a Java broker and rocketd (rocketmq-spec.md §6.5). They are
// fastjson text in its PrettyFormat: UTF-8, one tab per nesting level,
// properties sorted by name, "key":value without blanks, and integer map
// keys written unquoted on one line (not valid JSON; protocol's
// UnmarshalFastJSON reads it, and reads compact and quoted-key forms too).
// java_test.go checks both directions against RocketMQ's own classes
// (4.9.8 with fastjson 1.2.69; 5.3.1 reads too): Java reads what we write,
// we read what Java writes, and for the same content the bytes are
// identical.
//
//	topics.json                    written on every change
//	{
//		"dataVersion":{
//			"counter":2,               int64, +1 per change
//			"timestamp":1690000000000  int64, ms of the last change
//		},
//		"topicConfigTable":{
//			"TopicA":{
//				"order":false,
//				"perm":6,                  PermName bits: 4 R, 2 W, 1 inherit
//				"readQueueNums":4,
//				"topicFilterType":"SINGLE_TAG",   or "MULTI_TAG"
//				"topicName":"TopicA",
//				"topicSysFlag":0,
//				"writeQueueNums":4
//			}
//		}
//	}
//
//	subscriptionGroup.json         written on every change
//	{
//		"dataVersion":{ ... as above ... },
//		"subscriptionGroupTable":{
//			"g1":{
//				"brokerId":0,
//				"consumeBroadcastEnable":true,
//				"consumeEnable":true,
//				"consumeFromMinEnable":true,
//				"groupName":"g1",
//				"notifyConsumerIdsChangedEnable":true,
//				"retryMaxTimes":16,
//				"retryQueueNums":1,
//				"whichBrokerWhenConsumeSlowly":1
//			}
//		},
//		"forbiddenTable":{             5.x, written when not empty
//			"g1":{"TopicA":4}          group -> topic -> bits; 4 = 1<<2
//		}                              (PermName.INDEX_PERM_READ): g1 may
//	}                                  not pull TopicA (UPDATE_AND_GET_GROUP_FORBIDDEN)
//
//	consumerOffset.json            Offsets.Persist (every 5 s, on Close)
//	{
//		"offsetTable":{
//			"TopicA@g1":{0:250,1:251       key: topic first, '@', group;
//			}                              inner keys: queue ids, unquoted
//		}
//	}
//
//	delayOffset.json               DelayOffsets.Persist
//	{
//		"offsetTable":{1:0,2:15         delay level (1-based) -> next offset
//		}                               of queue level-1 of SCHEDULE_TOPIC_XXXX
//	}
//
//	messageRequestMode.json        RequestModes.Set (5.x; every change)
//	{
//		"messageRequestModeMap":{
//			"TopicA":{                 topic -> group -> SET_MESSAGE_REQUEST_MODE body
//				"g1":{
//					"consumerGroup":"g1",
//					"mode":"POP",          or "PULL"
//					"popShareQueueNum":0,
//					"topic":"TopicA"
//				}
//			}
//		}
//	}
//
//	topicQueueMapping.json         Mappings.Update/Delete (5.x static topics; every change)
//	{
//		"dataVersion":{...},
//		"topicQueueMappingInfoMap":{
//			"TopicS":{                 this broker's TopicQueueMappingDetail
//				"bname":"broker-a",    the broker it is for (checked)
//				"currIdMap":{},
//				"dirty":false,
//				"epoch":1700000000000, a newer epoch replaces, an older is refused
//				"hostedQueues":{0:[    logic queue id -> chain, leader last
//						{"bname":"broker-a","endOffset":-1,"gen":0,"logicOffset":0,
//						 "queueId":0,"startOffset":0,"timeOfEnd":-1,"timeOfStart":-1}
//					]
//				},
//				"scope":"__global__",
//				"topic":"TopicS",
//				"totalQueues":1
//			}
//		}
//	}
//
// Mappings.Update applies TopicQueueMappingManager.updateTopicQueueMapping's
// rules (protocol.CheckItemOffsets and CheckItemsImmutable; force keeps
// the old chains the new detail lacks) and refuses what Java would throw
// on or only assert, with ErrMapping.
//
// Java 5.x additions: a topic's "attributes" ({"message.type":"FIFO",
// ...}, written when not empty) and a group's consumeMessageOrderly,
// groupRetryPolicy ({"type":"CUSTOMIZED"} or EXPONENTIAL with
// exponentialRetryPolicy {initial,max,multiplier}), groupSysFlag,
// consumeTimeoutMinute (15), subscriptionDataSet and attributes are
// modelled; a group's are written only when they differ from Java's
// default, so 4.9.x content is written byte for byte as 4.9.8 writes it.
// Every other property of a topic entry, a group entry or the file's top
// level (a newer release's additions) is kept as its
// JSON text and written back in name order, re-indented: rewriting a
// Java-written file loses nothing (TestJava5FilesSurviveRewrite, fixtures
// testdata/java5-*.json written by RocketMQ 5.3.1). The offset files'
// 5.x dataVersion is still dropped. 4.9.x and 5.x brokers read what
// rocketd writes.
//
// # Attributes
//
// attributes.go holds Java's TopicAttributes (message.type, queue.type,
// cleanup.policy, reserve.time) and the modification rules of
// AttributeParser and AttributeUtil.alterCurrentAttributes: "+k=v" adds or
// updates, "-k" deletes; at creation only additions; queue.type and
// cleanup.policy only at creation; values verified; refusals carry Java's
// message (ErrAttribute). 5.x defines no group attribute, so any is
// refused. Topics.Update and Groups.Update apply them.
//
// # Write protocol
//
// A file is replaced as Java's MixAll.string2File does, made crash safe:
// write <file>.tmp and fsync it, copy the current <file> to <file>.bak and
// fsync that, rename <file>.tmp over <file>, fsync the directory. <file> is
// never absent, so a crash at any point leaves the old or the new content.
// Loading reads <file> and falls back to <file>.bak when <file> is missing,
// empty or does not decode. Unlike Java, a file that does not decode with no
// usable backup is an error, not an empty table.
//
// # Concurrency
//
// Each table has one RWMutex over its map (and DataVersion): readers take
// it shared for a map lookup; writers hold it only to change the map. Each
// file has a mutex that serializes its writes and is held across the file
// I/O; a write takes the table lock (shared) inside it, only to copy the
// snapshot. Lock order: file mutex, then table lock; nothing takes them the
// other way round, and no table lock is held across I/O or while change
// listeners run. A change made by Put, Delete, AutoCreate, EnsureTopic or
// FindOrCreate is durable when the call returns (the last three log a
// failed write instead of returning it, since the change is usable in
// memory); changes that queue up behind a write in progress share the next
// write.
//
// # Startup content
//
// Topics starts with the system topics of §14.5 (SELF_TEST_TOPIC, TBW102
// when autoCreateTopicEnable, BenchmarkTest, the cluster- and broker-name
// topics, OFFSET_MOVED_EVENT, SCHEDULE_TOPIC_XXXX with 18 queues, the trace
// topic when traceTopicEnable, <cluster>_REPLY_TOPIC, and the two
// transaction topics) and Groups with the built-in groups; entries from the
// files override them.
package meta
