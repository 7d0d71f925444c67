package io.rocketd.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.message.MessageQueueAssignment;
import org.apache.rocketmq.common.message.MessageRequestMode;
import org.apache.rocketmq.remoting.protocol.heartbeat.MessageModel;

/**
 * Server-side rebalance with the 5.x client (rmq5 only: 4.9.8 has neither
 * code). Two push consumers with clientRebalance=false get their queues
 * from QUERY_ASSIGNMENT (400): their assignments are disjoint, cover the
 * topic, and messages sent afterwards reach exactly the owner of their
 * queue. Then MQClientAPIImpl's own calls: queryAssignment answers each
 * client its AVG share in PULL mode; SET_MESSAGE_REQUEST_MODE (401) POP
 * shows in the next answer (queue id -1: any queue); a retry topic is
 * refused NO_PERMISSION; an unknown strategy answers no list (null).
 *
 * <p>Usage: AssignmentCheck NAMESRV_ADDR TOPIC BROKER_ADDR. The topic needs
 * 4 queues. Exit code 0 when every check passes.
 */
public final class AssignmentCheck {
    private static final long WAIT_MS = 60_000;

    private final String namesrv;
    private final String topic;
    private final String broker;
    private final String runId = Long.toString(System.currentTimeMillis(), 36);
    private final List<String> failures = new ArrayList<>();

    private AssignmentCheck(String namesrv, String topic, String broker) {
        this.namesrv = namesrv;
        this.topic = topic;
        this.broker = broker;
    }

    public static void main(String[] args) {
        System.setProperty("rocketmq.client.rebalance.waitInterval", "1000");
        CheckMain.run("AssignmentCheck", args, 3, false, a -> {
            AssignmentCheck check = new AssignmentCheck(a[0], a[1], a[2]);
            return () -> {
                check.run();
                return check.report();
            };
        });
    }

    private static String key(int queueId, long offset) {
        return queueId + ":" + offset;
    }

    private void run() throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer("interop_qa_p_" + runId);
        producer.setNamesrvAddr(namesrv);
        producer.setVipChannelEnabled(false);
        producer.start();
        String group = "interop_qa_" + runId;
        List<DefaultMQPushConsumer> cs = new ArrayList<>();
        List<Set<String>> got = new ArrayList<>();
        try {
            List<MessageQueue> mqs = new ArrayList<>(producer.fetchPublishMessageQueues(topic));
            mqs.sort(null);
            expect(mqs.size() == 4, "topic has " + mqs.size() + " queues, want 4");
            Set<String> all = new TreeSet<>();
            all.addAll(send(producer, mqs, 5, "before"));

            for (int i = 0; i < 2; i++) {
                Set<String> mine = ConcurrentHashMap.newKeySet();
                got.add(mine);
                DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
                c.setNamesrvAddr(namesrv);
                c.setVipChannelEnabled(false);
                c.setInstanceName("qa" + i + "_" + runId);
                c.setClientRebalance(false);
                c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
                c.subscribe(topic, "*");
                c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                    for (MessageExt m : msgs) {
                        mine.add(key(m.getQueueId(), m.getQueueOffset()));
                    }
                    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
                });
                c.start();
                cs.add(c);
            }

            // Settled: the two working sets are disjoint, non-empty, cover the topic.
            long deadline = System.currentTimeMillis() + WAIT_MS;
            List<Set<Integer>> owned = new ArrayList<>();
            boolean settled = false;
            while (!settled && System.currentTimeMillis() < deadline) {
                owned.clear();
                for (DefaultMQPushConsumer c : cs) {
                    owned.add(working(c));
                }
                Set<Integer> union = new HashSet<>(owned.get(0));
                union.addAll(owned.get(1));
                settled = !owned.get(0).isEmpty() && !owned.get(1).isEmpty()
                        && union.size() == mqs.size() && owned.get(0).size() + owned.get(1).size() == mqs.size();
                if (!settled) {
                    Thread.sleep(100);
                }
            }
            System.out.printf("server rebalance: working queues %s / %s%n", owned.get(0), owned.get(1));
            expect(settled, "the two consumers never split the queues: " + owned);

            Set<String> fresh = send(producer, mqs, 2, "after");
            all.addAll(fresh);
            deadline = System.currentTimeMillis() + WAIT_MS;
            while (System.currentTimeMillis() < deadline) {
                Set<String> union = new HashSet<>(got.get(0));
                union.addAll(got.get(1));
                if (union.containsAll(all)) {
                    break;
                }
                Thread.sleep(100);
            }
            Set<String> union = new HashSet<>(got.get(0));
            union.addAll(got.get(1));
            Set<String> missing = new TreeSet<>(all);
            missing.removeAll(union);
            expect(missing.isEmpty(), "never consumed: " + missing);
            for (int i = 0; i < 2; i++) {
                int share = 0;
                for (String k : fresh) {
                    boolean owns = owned.get(i).contains(Integer.parseInt(k.substring(0, k.indexOf(':'))));
                    share += owns ? 1 : 0;
                    expect(owns == got.get(i).contains(k), "consumer " + i + " (queues " + owned.get(i) + ") "
                            + (owns ? "did not consume " : "consumed ") + k);
                }
                System.out.printf("server rebalance: consumer %d consumed %d, %d of the %d sent after the split%n",
                        i, got.get(i).size(), share, fresh.size());
            }
            System.out.printf("server rebalance: together %d of %d messages%n", union.size(), all.size());

            direct(cs, owned, group);
        } finally {
            for (DefaultMQPushConsumer c : cs) {
                c.shutdown();
            }
            producer.shutdown();
        }
    }

    private Set<String> send(DefaultMQProducer p, List<MessageQueue> mqs, int each, String tag) throws Exception {
        Set<String> keys = new TreeSet<>();
        for (int i = 0; i < each; i++) {
            for (MessageQueue mq : mqs) {
                Message m = new Message(topic, "QA", ("qa " + runId + " " + tag).getBytes(StandardCharsets.UTF_8));
                SendResult r = p.send(m, mq);
                expect(r.getSendStatus() == SendStatus.SEND_OK, "send " + r);
                keys.add(key(r.getMessageQueue().getQueueId(), r.getQueueOffset()));
            }
        }
        return keys;
    }

    private Set<Integer> working(DefaultMQPushConsumer c) {
        Set<Integer> out = new TreeSet<>();
        for (Map.Entry<MessageQueue, ?> e : c.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().entrySet()) {
            if (e.getKey().getTopic().equals(topic)) {
                out.add(e.getKey().getQueueId());
            }
        }
        return out;
    }

    private static Set<Integer> ids(Set<MessageQueueAssignment> as) {
        Set<Integer> out = new TreeSet<>();
        for (MessageQueueAssignment a : as) {
            out.add(a.getMessageQueue().getQueueId());
        }
        return out;
    }

    /** The client API calls themselves. */
    private void direct(List<DefaultMQPushConsumer> cs, List<Set<Integer>> owned, String group) throws Exception {
        for (int i = 0; i < cs.size(); i++) {
            MQClientInstance f = cs.get(i).getDefaultMQPushConsumerImpl().getmQClientFactory();
            Set<MessageQueueAssignment> as = f.getMQClientAPIImpl().queryAssignment(broker, topic, group,
                    f.getClientId(), "AVG", MessageModel.CLUSTERING, 5000);
            expect(as != null && ids(as).equals(owned.get(i)), "queryAssignment for consumer " + i + ": " + as
                    + ", its working queues " + owned.get(i));
            boolean pull = as != null && as.stream().allMatch(a -> a.getMode() == MessageRequestMode.PULL);
            expect(pull, "queryAssignment modes: " + as);
            System.out.printf("queryAssignment AVG consumer %d: queues %s, all PULL %b%n", i, as == null ? null : ids(as), pull);
        }
        MQClientInstance f = cs.get(0).getDefaultMQPushConsumerImpl().getmQClientFactory();
        MQClientAPIImpl api = f.getMQClientAPIImpl();

        Set<MessageQueueAssignment> none = api.queryAssignment(broker, topic, group, f.getClientId(), "NO_SUCH", MessageModel.CLUSTERING, 5000);
        expect(none == null, "unknown strategy: " + none + ", want null");
        System.out.printf("queryAssignment unknown strategy: %s%n", none);

        String popGroup = "interop_qa_pop_" + runId;
        api.setMessageRequestMode(broker, topic, popGroup, MessageRequestMode.POP, 0, 5000);
        Set<MessageQueueAssignment> pop = api.queryAssignment(broker, topic, popGroup, f.getClientId(), "AVG", MessageModel.BROADCASTING, 5000);
        boolean allPop = pop != null && pop.size() == 4 && pop.stream().allMatch(a -> a.getMode() == MessageRequestMode.POP);
        expect(allPop, "after SET_MESSAGE_REQUEST_MODE POP: " + pop);
        System.out.printf("setMessageRequestMode POP, broadcasting query: %d queues, all POP %b%n", pop == null ? 0 : pop.size(), allPop);

        try {
            api.setMessageRequestMode(broker, "%RETRY%" + group, group, MessageRequestMode.POP, 0, 5000);
            expect(false, "SET_MESSAGE_REQUEST_MODE on a retry topic accepted");
        } catch (MQClientException e) {
            expect(e.getResponseCode() == 16, "retry topic: code " + e.getResponseCode() + ", want NO_PERMISSION (16)");
            System.out.printf("setMessageRequestMode on a retry topic: code %d (%s)%n", e.getResponseCode(), e.getErrorMessage());
        }
    }

    private synchronized void expect(boolean ok, String what) {
        if (!ok) {
            failures.add(what);
        }
    }

    private int report() {
        if (failures.isEmpty()) {
            System.out.println("java assignment check: OK");
            return 0;
        }
        System.out.println("java assignment check: " + failures.size() + " failure(s)");
        failures.forEach(x -> System.out.println("  FAIL " + x));
        return 1;
    }
}
