package io.rocketd.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.message.MessageRequestMode;

/**
 * POP consumption with the 5.x remoting client (rmq5 only): the group is
 * switched to POP (SET_MESSAGE_REQUEST_MODE 401), a push consumer with
 * clientRebalance=false pops (POP_MESSAGE 200050) and acks (ACK_MESSAGE
 * 200051) every message. One message is failed once: the client moves its
 * invisible time (CHANGE_MESSAGE_INVISIBLETIME 200053) and it comes back
 * through the pop retry topic with reconsumeTimes 1. Every message is
 * consumed successfully exactly once; after the invisible time has passed
 * again nothing else comes back, and the pop retry topic holds the failed
 * message only.
 *
 * <p>Usage: PopCheck NAMESRV_ADDR TOPIC BROKER_ADDR. Exit code 0 when every
 * check passes.
 */
public final class PopCheck {
    private static final long WAIT_MS = 60_000;
    private static final long INVISIBLE_MS = 5_000; // the client's minimum
    private static final int N = 40;

    private final String namesrv;
    private final String topic;
    private final String broker;
    private final String runId = Long.toString(System.currentTimeMillis(), 36);
    private final List<String> failures = new ArrayList<>();

    private PopCheck(String namesrv, String topic, String broker) {
        this.namesrv = namesrv;
        this.topic = topic;
        this.broker = broker;
    }

    public static void main(String[] args) {
        System.setProperty("rocketmq.client.rebalance.waitInterval", "1000");
        CheckMain.run("PopCheck", args, 3, false, a -> {
            PopCheck check = new PopCheck(a[0], a[1], a[2]);
            return () -> {
                check.run();
                return check.report();
            };
        });
    }

    private void run() throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer("interop_pop_p_" + runId);
        producer.setNamesrvAddr(namesrv);
        producer.setVipChannelEnabled(false);
        producer.start();
        String group = "interop_pop_" + runId;
        DefaultMQPushConsumer c = null;
        try {
            MQClientAPIImpl api = producer.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl();
            api.setMessageRequestMode(broker, topic, group, MessageRequestMode.POP, 0, 5000);

            Set<String> sent = new TreeSet<>();
            for (int i = 0; i < N; i++) {
                Message m = new Message(topic, "POP", ("pop " + runId + " " + i).getBytes(StandardCharsets.UTF_8));
                m.setKeys("k" + i);
                SendResult r = producer.send(m);
                expect(r.getSendStatus() == SendStatus.SEND_OK, "send " + r);
                sent.add("k" + i);
            }
            String failOnce = "k7";

            Map<String, AtomicInteger> ok = new ConcurrentHashMap<>();
            Map<String, List<Integer>> deliveries = new ConcurrentHashMap<>();
            Set<String> topics = ConcurrentHashMap.newKeySet();
            c = new DefaultMQPushConsumer(group);
            c.setNamesrvAddr(namesrv);
            c.setVipChannelEnabled(false);
            c.setInstanceName("pop_" + runId);
            c.setClientRebalance(false);
            c.setPopInvisibleTime(INVISIBLE_MS);
            c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            c.subscribe(topic, "*");
            c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    topics.add(m.getTopic());
                    deliveries.computeIfAbsent(m.getKeys(), k -> new ArrayList<>()).add(m.getReconsumeTimes());
                    expect(m.getProperty("POP_CK") != null, "message " + m.getKeys() + " has no POP_CK");
                }
                if (msgs.size() == 1 && failOnce.equals(msgs.get(0).getKeys()) && msgs.get(0).getReconsumeTimes() == 0) {
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                }
                for (MessageExt m : msgs) {
                    if (failOnce.equals(m.getKeys()) && m.getReconsumeTimes() == 0 && msgs.size() > 1) {
                        // In a batch: fail it alone the next time round.
                        expect(false, "batch consumption: consumeMessageBatchMaxSize is 1");
                    }
                    ok.computeIfAbsent(m.getKeys(), k -> new AtomicInteger()).incrementAndGet();
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            c.start();

            long t0 = System.currentTimeMillis();
            long deadline = t0 + WAIT_MS;
            while (!ok.keySet().containsAll(sent) && System.currentTimeMillis() < deadline) {
                Thread.sleep(100);
            }
            long took = System.currentTimeMillis() - t0;
            Set<String> missing = new TreeSet<>(sent);
            missing.removeAll(ok.keySet());
            expect(missing.isEmpty(), "never consumed: " + missing);
            System.out.printf("pop: %d of %d messages consumed in %d ms, topics seen %s%n", ok.size(), N, took, topics);
            List<Integer> failed = deliveries.get(failOnce);
            expect(failed != null && failed.size() == 2 && failed.get(0) == 0 && failed.get(1) == 1,
                    "the failed message's deliveries (reconsume times): " + failed + ", want [0, 1]");
            System.out.printf("pop: %s failed once, delivered with reconsume times %s%n", failOnce, failed);

            // Acked messages stay acked: after another invisible time
            // nothing more arrives.
            Thread.sleep(INVISIBLE_MS + 3_000);
            int extra = 0;
            for (Map.Entry<String, List<Integer>> e : deliveries.entrySet()) {
                int want = e.getKey().equals(failOnce) ? 2 : 1;
                if (e.getValue().size() != want) {
                    extra++;
                    expect(false, e.getKey() + " delivered " + e.getValue().size() + " times, want " + want);
                }
            }
            for (Map.Entry<String, AtomicInteger> e : ok.entrySet()) {
                expect(e.getValue().get() == 1, e.getKey() + " consumed successfully " + e.getValue().get() + " times");
            }
            String brokerName = producer.fetchPublishMessageQueues(topic).get(0).getBrokerName();
            long retried = api.getMaxOffset(broker, new MessageQueue("%RETRY%" + group + "_" + topic, brokerName, 0), 5000);
            expect(retried == 1, "pop retry topic holds " + retried + " messages, want 1");
            System.out.printf("pop: %d unexpected redeliveries; pop retry topic holds %d message(s)%n", extra, retried);
        } finally {
            if (c != null) {
                c.shutdown();
            }
            producer.shutdown();
        }
    }

    private synchronized void expect(boolean ok, String what) {
        if (!ok) {
            failures.add(what);
        }
    }

    private int report() {
        if (failures.isEmpty()) {
            System.out.println("java pop check: OK");
            return 0;
        }
        System.out.println("java pop check: " + failures.size() + " failure(s)");
        failures.forEach(x -> System.out.println("  FAIL " + x));
        return 1;
    }
}
