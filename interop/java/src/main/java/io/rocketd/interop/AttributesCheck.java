package io.rocketd.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.attribute.TopicMessageType;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.protocol.body.SubscriptionGroupWrapper;
import org.apache.rocketmq.remoting.protocol.body.TopicConfigSerializeWrapper;
import org.apache.rocketmq.remoting.protocol.statictopic.TopicConfigAndQueueMapping;
import org.apache.rocketmq.remoting.protocol.subscription.ExponentialRetryPolicy;
import org.apache.rocketmq.remoting.protocol.subscription.GroupRetryPolicy;
import org.apache.rocketmq.remoting.protocol.subscription.GroupRetryPolicyType;
import org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig;

/**
 * Topic and group attributes with the 5.x Java client's own admin calls
 * (MQClientAPIImpl, what mqadmin and the 5.x proxy use): a topic created
 * with +message.type=FIFO is read back with GET_TOPIC_CONFIG (351) and
 * GET_ALL_TOPIC_CONFIG, updated and refused with Java's messages; a topic
 * list is created; an orderly group with a retry policy is created and read
 * back whole (GET_ALL_SUBSCRIPTIONGROUP_CONFIG, GET_SUBSCRIPTIONGROUP_CONFIG); a sent
 * message carries the broker's MSG_REGION and TRACE_ON.
 *
 * <p>Usage: AttributesCheck NAMESRV_ADDR TOPIC BROKER_ADDR. Exit code 0 when
 * every check passes. 5.x client only (rmq5).
 */
public final class AttributesCheck {
    private static final long TIMEOUT_MS = 10_000;

    private final String namesrv;
    private final String topic;
    private final String broker;
    private final String runId = Long.toString(System.currentTimeMillis(), 36);
    private final List<String> failures = new ArrayList<>();

    private AttributesCheck(String namesrv, String topic, String broker) {
        this.namesrv = namesrv;
        this.topic = topic;
        this.broker = broker;
    }

    public static void main(String[] args) {
        CheckMain.run("AttributesCheck", args, 3, false, a -> {
            AttributesCheck check = new AttributesCheck(a[0], a[1], a[2]);
            return () -> {
                check.run();
                return check.report();
            };
        });
    }

    private void expect(boolean ok, String what) {
        System.out.println((ok ? "ok   " : "FAIL ") + what);
        if (!ok) {
            failures.add(what);
        }
    }

    private int report() {
        if (failures.isEmpty()) {
            System.out.println("AttributesCheck: all checks passed");
            return 0;
        }
        System.out.println("AttributesCheck: " + failures.size() + " failed: " + failures);
        return 1;
    }

    private void run() throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer("attrs_pg_" + runId);
        producer.setNamesrvAddr(namesrv);
        producer.start();
        try {
            MQClientAPIImpl api = producer.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl();
            topics(api, producer);
            groups(api);
            storedProperties(producer);
        } finally {
            producer.shutdown();
        }
    }

    private void topics(MQClientAPIImpl api, DefaultMQProducer producer) throws Exception {
        String fifo = topic + "_FIFO";
        TopicConfig tc = new TopicConfig(fifo, 4, 4, 6);
        tc.getAttributes().put("+message.type", "FIFO");
        api.createTopic(broker, "TBW102", tc, TIMEOUT_MS);

        TopicConfigAndQueueMapping got = api.getTopicConfig(broker, fifo, TIMEOUT_MS);
        System.out.println("GET_TOPIC_CONFIG " + fifo + ": attributes " + got.getAttributes()
            + ", message type " + got.getTopicMessageType() + ", queues " + got.getWriteQueueNums()
            + ", mapping " + got.getMappingDetail());
        expect(got.getTopicMessageType() == TopicMessageType.FIFO, "GET_TOPIC_CONFIG reads message.type=FIFO");
        expect(got.getWriteQueueNums() == 4 && got.getPerm() == 6, "GET_TOPIC_CONFIG reads the queues and perm");

        // The attributes leave the route alone: the producer finds the topic
        // through the NameServer and sends to it (the broker does not check
        // the message type; the 5.x proxy would).
        SendResult fifoSend = null;
        for (int i = 0; i < 50 && fifoSend == null; i++) {
            try {
                fifoSend = producer.send(new Message(fifo, "x".getBytes(StandardCharsets.UTF_8)));
            } catch (MQClientException e) {
                Thread.sleep(200); // the route may lag the creation by a registration
            }
        }
        expect(fifoSend != null && fifoSend.getSendStatus() == SendStatus.SEND_OK
            && fifoSend.getMessageQueue().getTopic().equals(fifo), "a send to the FIFO topic is routed and stored");

        TopicConfigSerializeWrapper all = api.getAllTopicConfig(broker, TIMEOUT_MS);
        TopicConfig inAll = all.getTopicConfigTable().get(fifo);
        expect(inAll != null && "FIFO".equals(inAll.getAttributes().get("message.type")),
            "GET_ALL_TOPIC_CONFIG carries the attributes");

        // An update changes the message type; the broker keeps what it is not told.
        TopicConfig upd = new TopicConfig(fifo, 4, 4, 6);
        upd.getAttributes().put("+message.type", "NORMAL");
        api.createTopic(broker, "TBW102", upd, TIMEOUT_MS);
        got = api.getTopicConfig(broker, fifo, TIMEOUT_MS);
        expect(got.getTopicMessageType() == TopicMessageType.NORMAL, "update to message.type=NORMAL read back");

        refused(api, fifo, "+queue.type", "SimpleCQ",
            "attempt to update an unchangeable attribute. key: queue.type");
        refused(api, topic + "_BAD", "+message.type", "BAD",
            "value is not in set: [UNSPECIFIED, MIXED, TRANSACTION, FIFO, DELAY, NORMAL]");
        refused(api, topic + "_BAD", "+nope", "1", "unsupported key: nope");

        // UPDATE_AND_CREATE_TOPIC_LIST (18): the attributes map is the modification.
        TopicConfig l1 = new TopicConfig(topic + "_L1", 2, 2, 6);
        l1.getAttributes().put("+message.type", "DELAY");
        TopicConfig l2 = new TopicConfig(topic + "_L2", 1, 1, 6);
        api.createTopicList(broker, java.util.Arrays.asList(l1, l2), TIMEOUT_MS);
        expect(api.getTopicConfig(broker, l1.getTopicName(), TIMEOUT_MS).getTopicMessageType() == TopicMessageType.DELAY
            && api.getTopicConfig(broker, l2.getTopicName(), TIMEOUT_MS).getWriteQueueNums() == 1,
            "UPDATE_AND_CREATE_TOPIC_LIST creates both topics, one with message.type=DELAY");

        try {
            api.getTopicConfig(broker, topic + "_MISSING", TIMEOUT_MS);
            expect(false, "GET_TOPIC_CONFIG of a missing topic fails");
        } catch (MQBrokerException e) {
            System.out.println("missing topic: " + e.getResponseCode() + " " + e.getErrorMessage());
            expect(e.getResponseCode() == 17, "GET_TOPIC_CONFIG of a missing topic answers TOPIC_NOT_EXIST (17)");
        }
    }

    private void refused(MQClientAPIImpl api, String name, String key, String value, String remark) throws Exception {
        TopicConfig tc = new TopicConfig(name, 4, 4, 6);
        tc.getAttributes().put(key, value);
        try {
            api.createTopic(broker, "TBW102", tc, TIMEOUT_MS);
            expect(false, key + "=" + value + " on " + name + " is refused");
        } catch (MQClientException e) {
            System.out.println("refused " + key + "=" + value + ": " + e.getResponseCode() + " " + e.getErrorMessage());
            expect(e.getResponseCode() == 1 && remark.equals(e.getErrorMessage()),
                key + "=" + value + " refused with SYSTEM_ERROR \"" + remark + "\"");
        }
    }

    private void groups(MQClientAPIImpl api) throws Exception {
        String name = "attrs_orderly_" + runId;
        SubscriptionGroupConfig g = new SubscriptionGroupConfig();
        g.setGroupName(name);
        g.setConsumeMessageOrderly(true);
        g.setConsumeBroadcastEnable(false);
        g.setRetryMaxTimes(2);
        g.setGroupSysFlag(1);
        g.setConsumeTimeoutMinute(7);
        GroupRetryPolicy policy = new GroupRetryPolicy();
        policy.setType(GroupRetryPolicyType.EXPONENTIAL);
        policy.setExponentialRetryPolicy(new ExponentialRetryPolicy(1000, 60000, 3));
        g.setGroupRetryPolicy(policy);
        api.createSubscriptionGroup(broker, g, TIMEOUT_MS);

        SubscriptionGroupWrapper all = api.getAllSubscriptionGroup(broker, TIMEOUT_MS);
        SubscriptionGroupConfig got = all.getSubscriptionGroupTable().get(name);
        expect(got != null, "GET_ALL_SUBSCRIPTIONGROUP_CONFIG lists the group");
        if (got == null) {
            return;
        }
        System.out.println("group " + name + ": orderly " + got.isConsumeMessageOrderly() + ", broadcast "
            + got.isConsumeBroadcastEnable() + ", retryMaxTimes " + got.getRetryMaxTimes() + ", groupSysFlag "
            + got.getGroupSysFlag() + ", consumeTimeoutMinute " + got.getConsumeTimeoutMinute() + ", retry policy "
            + got.getGroupRetryPolicy() + ", attributes " + got.getAttributes());
        expect(got.isConsumeMessageOrderly() && !got.isConsumeBroadcastEnable() && got.getRetryMaxTimes() == 2
            && got.getGroupSysFlag() == 1 && got.getConsumeTimeoutMinute() == 7, "the orderly group reads back whole");
        expect(got.getGroupRetryPolicy().getType() == GroupRetryPolicyType.EXPONENTIAL
            && got.getGroupRetryPolicy().getRetryPolicy().nextDelayDuration(1) == 3000,
            "the group's exponential retry policy reads back");

        SubscriptionGroupConfig one = api.getSubscriptionGroupConfig(broker, name, TIMEOUT_MS);
        expect(one != null && one.isConsumeMessageOrderly() && one.getConsumeTimeoutMinute() == 7,
            "GET_SUBSCRIPTIONGROUP_CONFIG (352) reads the orderly group");

        // 5.x defines no group attribute: Java refuses any.
        SubscriptionGroupConfig bad = new SubscriptionGroupConfig();
        bad.setGroupName(name);
        Map<String, String> attrs = new TreeMap<>();
        attrs.put("+x", "1");
        bad.setAttributes(attrs);
        try {
            api.createSubscriptionGroup(broker, bad, TIMEOUT_MS);
            expect(false, "a group attribute is refused");
        } catch (MQClientException e) {
            System.out.println("group attribute refused: " + e.getResponseCode() + " " + e.getErrorMessage());
            expect(e.getResponseCode() == 1, "a group attribute is refused with SYSTEM_ERROR");
        }
        got = api.getAllSubscriptionGroup(broker, TIMEOUT_MS).getSubscriptionGroupTable().get(name);
        expect(got != null && got.isConsumeMessageOrderly(), "the refused update left the group as it was");
    }

    private void storedProperties(DefaultMQProducer producer) throws Exception {
        Message msg = new Message(topic, "TagA", ("attrs " + runId).getBytes(StandardCharsets.UTF_8));
        SendResult sr = producer.send(msg);
        expect(sr.getSendStatus() == SendStatus.SEND_OK, "send");
        MessageExt stored = producer.viewMessage(topic, sr.getOffsetMsgId());
        System.out.println("stored MSG_REGION=" + stored.getProperty("MSG_REGION") + " TRACE_ON="
            + stored.getProperty("TRACE_ON") + " CLUSTER=" + stored.getProperty("CLUSTER"));
        expect("DefaultRegion".equals(stored.getProperty("MSG_REGION")) && "true".equals(stored.getProperty("TRACE_ON")),
            "the stored message carries the broker's MSG_REGION and TRACE_ON");
    }
}
