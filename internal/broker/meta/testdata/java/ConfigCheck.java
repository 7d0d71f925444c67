// ConfigCheck reads the four broker config files of a directory with the
// classes and the fastjson version of Apache RocketMQ 4.9.8 and prints their
// content as sorted canonical lines. The Go test TestJavaReadsOurFiles runs
// it (java source-file mode) on files rocketd wrote and compares the lines
// with its own tables: proof that a Java broker reads what rocketd writes.
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
import org.apache.rocketmq.common.DataVersion;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.protocol.body.ConsumerOffsetSerializeWrapper;
import org.apache.rocketmq.common.protocol.body.SubscriptionGroupWrapper;
import org.apache.rocketmq.common.protocol.body.TopicConfigSerializeWrapper;
import org.apache.rocketmq.common.subscription.SubscriptionGroupConfig;
import org.apache.rocketmq.remoting.protocol.RemotingSerializable;

public class ConfigCheck {
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
        Path dir = Paths.get(args[0]);
        List<String> out = new ArrayList<>();

        TopicConfigSerializeWrapper topics =
            RemotingSerializable.fromJson(read(dir, "topics.json"), TopicConfigSerializeWrapper.class);
        out.add("topics-version " + version(topics.getDataVersion()));
        for (Map.Entry<String, TopicConfig> e : topics.getTopicConfigTable().entrySet()) {
            TopicConfig t = e.getValue();
            out.add("topic " + e.getKey() + " " + t.getTopicName() + " " + t.getReadQueueNums() + " "
                + t.getWriteQueueNums() + " " + t.getPerm() + " " + t.getTopicFilterType() + " "
                + t.getTopicSysFlag() + " " + t.isOrder());
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
