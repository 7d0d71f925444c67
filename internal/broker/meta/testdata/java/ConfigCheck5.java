// ConfigCheck5 is ConfigCheck with the classes of Apache RocketMQ 5.3.1
// (they moved to org.apache.rocketmq.remoting.protocol) and fastjson
// 1.2.83, which 5.x still uses for its config files. Modes as below:
//
// ConfigCheck exercises the four broker config files with the classes and
// the fastjson version of Apache RocketMQ 4.9.8 (java source-file mode):
//
//   ConfigCheck read DIR   parses the files in DIR as a Java broker does and
//                          prints their content as sorted canonical lines;
//   ConfigCheck write DIR  writes files with known content the way a Java
//                          broker persists them (pretty fastjson).
//
// ConfigCheck5 read also prints the 5.x properties (topic attributes, the
// 5.x group properties), and
//
//   ConfigCheck5 write5x DIR  writes topics.json and subscriptionGroup.json
//                          with 5.x content (a FIFO topic, an orderly group
//                          with a retry policy, the manager's forbiddenTable):
//                          the source of testdata/java5-*.json.
//
// The Go tests TestJavaReadsOurFiles and TestWeReadJavaFiles run it.
import com.alibaba.fastjson.JSON;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentMap;
import org.apache.rocketmq.remoting.protocol.DataVersion;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.remoting.protocol.body.ConsumerOffsetSerializeWrapper;
import org.apache.rocketmq.remoting.protocol.body.SubscriptionGroupWrapper;
import org.apache.rocketmq.remoting.protocol.body.TopicConfigSerializeWrapper;
import org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig;
import org.apache.rocketmq.remoting.protocol.RemotingSerializable;

public class ConfigCheck5 {
    // The shape of the store module's DelayOffsetSerializeWrapper.
    public static class DelayOffsets {
        private ConcurrentMap<Integer, Long> offsetTable;

        public ConcurrentMap<Integer, Long> getOffsetTable() {
            return offsetTable;
        }

        public void setOffsetTable(ConcurrentMap<Integer, Long> offsetTable) {
            this.offsetTable = offsetTable;
        }
    }

    static String read(Path dir, String name) throws Exception {
        return new String(Files.readAllBytes(dir.resolve(name)), StandardCharsets.UTF_8);
    }

    static String version(DataVersion v) {
        return v.getCounter().get() + "," + v.getTimestamp();
    }

    public static void main(String[] args) throws Exception {
        Path dir = Paths.get(args[1]);
        if (args[0].equals("write")) {
            write(dir);
        } else if (args[0].equals("write5x")) {
            write5x(dir);
        } else {
            read(dir);
        }
    }

    static void put(Path dir, String name, Object obj) throws Exception {
        // What ConfigManager.persist writes: encode(true), pretty format.
        Files.write(dir.resolve(name), RemotingSerializable.toJson(obj, true).getBytes(StandardCharsets.UTF_8));
    }

    static DataVersion dataVersion(long counter, long timestamp) {
        DataVersion v = new DataVersion();
        v.setCounter(new java.util.concurrent.atomic.AtomicLong(counter));
        v.setTimestamp(timestamp);
        return v;
    }

    static void write(Path dir) throws Exception {
        TopicConfigSerializeWrapper topics = new TopicConfigSerializeWrapper();
        topics.setDataVersion(dataVersion(5, 1690000000000L));
        TopicConfig ordered = new TopicConfig("Ordered", 8, 4, 4);
        ordered.setOrder(true);
        ordered.setTopicFilterType(org.apache.rocketmq.common.TopicFilterType.MULTI_TAG);
        ordered.setTopicSysFlag(1);
        topics.getTopicConfigTable().put("Ordered", ordered);
        put(dir, "topics.json", topics);

        SubscriptionGroupWrapper groups = new SubscriptionGroupWrapper();
        groups.setDataVersion(dataVersion(2, 1690000000001L));
        SubscriptionGroupConfig slow = new SubscriptionGroupConfig();
        slow.setGroupName("slow");
        slow.setConsumeEnable(false);
        slow.setRetryMaxTimes(3);
        slow.setBrokerId(1);
        groups.getSubscriptionGroupTable().put("slow", slow);
        put(dir, "subscriptionGroup.json", groups);

        ConsumerOffsetSerializeWrapper offsets = new ConsumerOffsetSerializeWrapper();
        ConcurrentMap<Integer, Long> queues = new java.util.concurrent.ConcurrentHashMap<>();
        queues.put(0, 250L);
        queues.put(1, 1L << 40);
        offsets.getOffsetTable().put("TopicTest@app_group", queues);
        put(dir, "consumerOffset.json", offsets);

        DelayOffsets delay = new DelayOffsets();
        delay.setOffsetTable(new java.util.concurrent.ConcurrentHashMap<>());
        delay.getOffsetTable().put(1, 0L);
        delay.getOffsetTable().put(18, 77L);
        put(dir, "delayOffset.json", delay);
    }

    static void write5x(Path dir) throws Exception {
        TopicConfigSerializeWrapper topics = new TopicConfigSerializeWrapper();
        topics.setDataVersion(dataVersion(9, 1700000000000L));
        TopicConfig fifo = new TopicConfig("FifoTopic", 4, 4, 6);
        fifo.getAttributes().put("message.type", "FIFO");
        fifo.getAttributes().put("queue.type", "SimpleCQ");
        topics.getTopicConfigTable().put("FifoTopic", fifo);
        topics.getTopicConfigTable().put("Plain", new TopicConfig("Plain", 2, 2, 6));
        put(dir, "topics.json", topics);

        SubscriptionGroupConfig orderly = new SubscriptionGroupConfig();
        orderly.setGroupName("orderly");
        orderly.setConsumeMessageOrderly(true);
        orderly.setRetryMaxTimes(2);
        orderly.setGroupSysFlag(1);
        orderly.setConsumeTimeoutMinute(7);
        org.apache.rocketmq.remoting.protocol.subscription.GroupRetryPolicy policy =
            new org.apache.rocketmq.remoting.protocol.subscription.GroupRetryPolicy();
        policy.setType(org.apache.rocketmq.remoting.protocol.subscription.GroupRetryPolicyType.EXPONENTIAL);
        policy.setExponentialRetryPolicy(
            new org.apache.rocketmq.remoting.protocol.subscription.ExponentialRetryPolicy(1000, 60000, 3));
        orderly.setGroupRetryPolicy(policy);
        java.util.Set<org.apache.rocketmq.remoting.protocol.subscription.SimpleSubscriptionData> subs = new java.util.HashSet<>();
        subs.add(new org.apache.rocketmq.remoting.protocol.subscription.SimpleSubscriptionData("FifoTopic", "TAG", "a || b", 3));
        orderly.setSubscriptionDataSet(subs);
        SubscriptionGroupConfig plain = new SubscriptionGroupConfig();
        plain.setGroupName("plain");
        // The shape of SubscriptionGroupManager, which 5.x persists whole.
        Map<String, Object> manager = new java.util.LinkedHashMap<>();
        Map<String, SubscriptionGroupConfig> table = new java.util.HashMap<>();
        table.put("orderly", orderly);
        table.put("plain", plain);
        manager.put("subscriptionGroupTable", table);
        Map<String, Map<String, Integer>> forbidden = new java.util.HashMap<>();
        forbidden.put("orderly", new java.util.HashMap<>(Map.of("FifoTopic", 1)));
        manager.put("forbiddenTable", forbidden);
        manager.put("dataVersion", dataVersion(4, 1700000000001L));
        put(dir, "subscriptionGroup.json", new com.alibaba.fastjson.JSONObject(manager));
    }

    static void read(Path dir) throws Exception {
        List<String> out = new ArrayList<>();

        TopicConfigSerializeWrapper topics =
            RemotingSerializable.fromJson(read(dir, "topics.json"), TopicConfigSerializeWrapper.class);
        out.add("topics-version " + version(topics.getDataVersion()));
        for (Map.Entry<String, TopicConfig> e : topics.getTopicConfigTable().entrySet()) {
            TopicConfig t = e.getValue();
            out.add("topic " + e.getKey() + " " + t.getTopicName() + " " + t.getReadQueueNums() + " "
                + t.getWriteQueueNums() + " " + t.getPerm() + " " + t.getTopicFilterType() + " "
                + t.getTopicSysFlag() + " " + t.isOrder());
            if (t.getAttributes() != null && !t.getAttributes().isEmpty()) {
                out.add("topic-attributes " + e.getKey() + " " + new java.util.TreeMap<>(t.getAttributes())
                    + " " + t.getTopicMessageType());
            }
        }

        SubscriptionGroupWrapper groups =
            RemotingSerializable.fromJson(read(dir, "subscriptionGroup.json"), SubscriptionGroupWrapper.class);
        out.add("groups-version " + version(groups.getDataVersion()));
        for (Map.Entry<String, SubscriptionGroupConfig> e : groups.getSubscriptionGroupTable().entrySet()) {
            SubscriptionGroupConfig g = e.getValue();
            out.add("group " + e.getKey() + " " + g.getGroupName() + " " + g.isConsumeEnable() + " "
                + g.isConsumeFromMinEnable() + " " + g.isConsumeBroadcastEnable() + " " + g.getRetryQueueNums()
                + " " + g.getRetryMaxTimes() + " " + g.getBrokerId() + " " + g.getWhichBrokerWhenConsumeSlowly()
                + " " + g.isNotifyConsumerIdsChangedEnable());
            out.add("group5 " + e.getKey() + " " + g.isConsumeMessageOrderly() + " " + g.getGroupSysFlag() + " "
                + g.getConsumeTimeoutMinute() + " " + g.getGroupRetryPolicy().getType() + " "
                + g.getGroupRetryPolicy().getRetryPolicy().nextDelayDuration(1) + " " + new java.util.TreeMap<>(g.getAttributes()));
        }

        ConsumerOffsetSerializeWrapper offsets =
            RemotingSerializable.fromJson(read(dir, "consumerOffset.json"), ConsumerOffsetSerializeWrapper.class);
        for (Map.Entry<String, ConcurrentMap<Integer, Long>> e : offsets.getOffsetTable().entrySet()) {
            for (Map.Entry<Integer, Long> q : e.getValue().entrySet()) {
                out.add("offset " + e.getKey() + " " + q.getKey() + " " + q.getValue());
            }
        }

        DelayOffsets delay = JSON.parseObject(read(dir, "delayOffset.json"), DelayOffsets.class);
        for (Map.Entry<Integer, Long> e : delay.getOffsetTable().entrySet()) {
            out.add("delay " + e.getKey() + " " + e.getValue());
        }

        Collections.sort(out);
        for (String line : out) {
            System.out.println(line);
        }
    }
}
