package io.rocketd.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Produces with every send mode of the official Java client (sync, async,
 * oneway, batch) and consumes with push consumers in clustering mode against
 * rocketd, checking what the Go interop tests check: every message arrives
 * exactly once with body, tags, keys and user properties intact, and a tag
 * filter ("TagA || TagB") delivers exactly the matching messages.
 *
 * <p>Usage: InteropCheck NAMESRV_ADDR TOPIC. Exit code 0 when every check
 * passes, 1 otherwise (each failure is printed).
 */
public final class InteropCheck {
    private static final int PER_MODE = 10;
    private static final String[] TAGS = {"TagA", "TagB", "TagC"};
    private static final long WAIT_MS = 60_000;

    /** What was sent, by the "checkId" user property. */
    private final Map<String, Message> sent = new ConcurrentHashMap<>();
    private final List<String> failures = new ArrayList<>();
    private final String namesrv;
    private final String topic;
    private final String runId = Long.toString(System.currentTimeMillis(), 36);

    private InteropCheck(String namesrv, String topic) {
        this.namesrv = namesrv;
        this.topic = topic;
    }

    public static void main(String[] args) {
        CheckMain.run("InteropCheck", args, 2, false, a -> {
            InteropCheck check = new InteropCheck(a[0], a[1]);
            return () -> {
                check.run();
                return check.report();
            };
        });
    }

    private void run() throws Exception {
        produce();
        consume("all_" + runId, "*", sent.keySet());
        Set<String> ab = ConcurrentHashMap.newKeySet();
        sent.forEach((id, m) -> {
            if (!m.getTags().equals("TagC")) {
                ab.add(id);
            }
        });
        consume("tagAB_" + runId, "TagA || TagB", ab);
    }

    private Message newMessage(String mode, int i) {
        String id = mode + "-" + i;
        String tag = TAGS[i % TAGS.length];
        // A non-ASCII body checks the byte-exact round trip.
        byte[] body = ("body " + id + " " + runId + " ü€").getBytes(StandardCharsets.UTF_8);
        Message m = new Message(topic, tag, "key-" + id + " k2-" + runId, body);
        m.putUserProperty("checkId", id);
        m.putUserProperty("mode", mode);
        m.putUserProperty("weird", "a=b;c d");
        sent.put(id, m);
        return m;
    }

    private void produce() throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer("interop_producer_" + runId);
        producer.setNamesrvAddr(namesrv);
        producer.setVipChannelEnabled(false);
        producer.setSendMsgTimeout(10_000);
        producer.start();
        try {
            for (int i = 0; i < PER_MODE; i++) {
                SendResult r = producer.send(newMessage("sync", i));
                expect(r.getSendStatus() == SendStatus.SEND_OK, "sync send " + i + ": " + r);
                expect(r.getMsgId() != null && r.getOffsetMsgId() != null, "sync send " + i + " ids: " + r);
            }
            CountDownLatch asyncDone = new CountDownLatch(PER_MODE);
            AtomicReference<Throwable> asyncErr = new AtomicReference<>();
            for (int i = 0; i < PER_MODE; i++) {
                producer.send(newMessage("async", i), new SendCallback() {
                    @Override
                    public void onSuccess(SendResult r) {
                        if (r.getSendStatus() != SendStatus.SEND_OK) {
                            asyncErr.compareAndSet(null, new IllegalStateException("async status " + r));
                        }
                        asyncDone.countDown();
                    }

                    @Override
                    public void onException(Throwable e) {
                        asyncErr.compareAndSet(null, e);
                        asyncDone.countDown();
                    }
                });
            }
            expect(asyncDone.await(30, TimeUnit.SECONDS), "async sends did not complete in 30 s");
            expect(asyncErr.get() == null, "async send failed: " + asyncErr.get());
            for (int i = 0; i < PER_MODE; i++) {
                producer.sendOneway(newMessage("oneway", i));
            }
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < PER_MODE; i++) {
                batch.add(newMessage("batch", i));
            }
            SendResult r = producer.send(batch);
            expect(r.getSendStatus() == SendStatus.SEND_OK, "batch send: " + r);
            expect(r.getMsgId() != null && r.getMsgId().split(",").length == PER_MODE,
                    "batch send msgIds: " + r.getMsgId());
        } finally {
            producer.shutdown();
        }
        System.out.printf("produced %d messages (sync, async, oneway, batch) to %s%n", sent.size(), topic);
    }

    /** Consumes with a new group until every expected message arrived, then checks them. */
    private void consume(String group, String expr, Set<String> expected) throws Exception {
        Map<String, MessageExt> got = new ConcurrentHashMap<>();
        AtomicInteger duplicates = new AtomicInteger();
        Set<String> unexpected = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("interop_" + group);
        consumer.setNamesrvAddr(namesrv);
        consumer.setVipChannelEnabled(false);
        // Clustering is the default; MessageModel moved package in 5.x, so
        // it is checked by name rather than set.
        expect(consumer.getMessageModel().name().equals("CLUSTERING"), group + ": not in clustering mode");
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, expr);
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                String id = m.getUserProperty("checkId");
                if (id == null || !expected.contains(id)) {
                    unexpected.add(id + " (tags " + m.getTags() + ")");
                } else if (got.putIfAbsent(id, m) != null) {
                    duplicates.incrementAndGet();
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        long start = System.nanoTime();
        consumer.start();
        try {
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (got.size() < expected.size() && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
            }
            // Give stray deliveries (wrong tags, duplicates) a moment to show.
            Thread.sleep(1000);
        } finally {
            consumer.shutdown();
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.printf("group %s (%s): %d of %d messages in %d ms, %d duplicates, %d unexpected%n",
                group, expr, got.size(), expected.size(), ms, duplicates.get(), unexpected.size());
        for (String id : new TreeMap<>(sent).keySet()) {
            if (!expected.contains(id)) {
                continue;
            }
            MessageExt m = got.get(id);
            if (m == null) {
                fail(group + ": message " + id + " not received");
                continue;
            }
            Message want = sent.get(id);
            expect(new String(m.getBody(), StandardCharsets.UTF_8).equals(new String(want.getBody(), StandardCharsets.UTF_8)),
                    group + ": " + id + " body " + new String(m.getBody(), StandardCharsets.UTF_8));
            expect(want.getTags().equals(m.getTags()), group + ": " + id + " tags " + m.getTags());
            expect(want.getKeys().equals(m.getKeys()), group + ": " + id + " keys " + m.getKeys());
            for (String k : new String[] {"checkId", "mode", "weird"}) {
                expect(want.getUserProperty(k).equals(m.getUserProperty(k)),
                        group + ": " + id + " property " + k + "=" + m.getUserProperty(k));
            }
            expect(topic.equals(m.getTopic()), group + ": " + id + " topic " + m.getTopic());
            expect(m.getMsgId() != null && !m.getMsgId().isEmpty(), group + ": " + id + " has no msgId");
        }
        expect(duplicates.get() == 0, group + ": " + duplicates.get() + " duplicate deliveries");
        expect(unexpected.isEmpty(), group + ": unexpected messages " + unexpected);
    }

    private void expect(boolean ok, String what) {
        if (!ok) {
            fail(what);
        }
    }

    private synchronized void fail(String what) {
        failures.add(what);
    }

    private int report() {
        if (failures.isEmpty()) {
            System.out.println("java interop check: OK");
            return 0;
        }
        System.out.println("java interop check: " + failures.size() + " failure(s)");
        failures.stream().limit(50).forEach(f -> System.out.println("  FAIL " + f));
        return 1;
    }
}
