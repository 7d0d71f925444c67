// Package protocol holds RocketMQ's remoting vocabulary: request and response
// codes, the typed custom headers carried in a command's extFields, and the
// JSON bodies in the shapes Java's fastjson writes and reads.
//
// It knows nothing of sockets (that is package remoting) and nothing of the
// store. See rocketmq-spec.md §2-§4 for the facts encoded here.
package protocol
