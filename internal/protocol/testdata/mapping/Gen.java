// Writes the Java texts of this directory (Apache RocketMQ 5.2.0, fastjson):
//   java -cp "$HOME/.cache/rocketd-bench/rocketmq-5.2.0/*" Gen.java
// line 1 -> detail.json, line 2 -> config_and_mapping.json, from line 4 -> topicQueueMapping.json
import java.util.*;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.remoting.protocol.statictopic.*;
import org.apache.rocketmq.remoting.protocol.body.TopicQueueMappingSerializeWrapper;
import org.apache.rocketmq.remoting.protocol.DataVersion;
import com.alibaba.fastjson.JSON;
public class Gen {
  public static void main(String[] a) {
    TopicQueueMappingDetail d = new TopicQueueMappingDetail("ST", 2, "broker-a", 1700000000000L);
    TopicQueueMappingDetail.putMappingInfo(d, 0, new ArrayList<>(List.of(new LogicQueueMappingItem(0, 0, "broker-a", 0, 0, -1, -1, -1))));
    TopicQueueMappingDetail.putMappingInfo(d, 1, new ArrayList<>(List.of(
      new LogicQueueMappingItem(0, 3, "broker-b", 0, 0, 10, -1, -1),
      new LogicQueueMappingItem(1, 1, "broker-a", 10, 0, -1, -1, -1))));
    System.out.println(new String(d.encode()));
    TopicConfig tc = new TopicConfig("ST", 2, 2);
    System.out.println(JSON.toJSONString(new TopicConfigAndQueueMapping(tc, d)));
    System.out.println(JSON.toJSONString(new TopicConfigAndQueueMapping(tc, null)));
    TopicQueueMappingSerializeWrapper w = new TopicQueueMappingSerializeWrapper();
    Map<String, TopicQueueMappingDetail> m = new HashMap<>(); m.put("ST", d);
    w.setTopicQueueMappingInfoMap(m);
    System.out.println(JSON.toJSONString(w, true));
  }
}
