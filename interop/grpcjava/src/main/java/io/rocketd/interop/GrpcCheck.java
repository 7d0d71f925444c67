package io.rocketd.interop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * GrpcCheck NAMESRV_ADDR TOPIC BROKER_ADDR GRPC_ADDR: the RocketMQ 5 Java SDK
 * (gRPC, plaintext; one producer over TLS, the SDK's default) against rocketd. Creates TOPIC_NORMAL, _FIFO, _DELAY and
 * _TXN with their message.type attribute (remoting admin), then: a Producer
 * sends normal, FIFO (message group), delay and transactional messages (one
 * committed, one rolled back, one left open for the TransactionChecker to
 * commit); a SimpleConsumer receives the normal ones, acks all but one, makes
 * that one visible again after 1 s with changeInvisibleDuration and sees it
 * redelivered with delivery attempt 2; a PushConsumer of all four topics
 * receives every message that should be delivered exactly once, the delay
 * message not before its delivery time; a PushConsumer of a group that
 * consumes orderly gets each message group's FIFO messages in send order. Exits 0 on pass.
 */
public final class GrpcCheck {
    static final int NORMAL = 8, FIFO = 6;
    static final Duration WAIT = Duration.ofSeconds(60);

    public static void main(String[] args) throws Exception {
        String namesrv = args[0], base = args[1], broker = args[2], grpc = args[3];
        String tNormal = base + "_NORMAL", tFifo = base + "_FIFO", tDelay = base + "_DELAY", tTxn = base + "_TXN";
        createTopic(namesrv, broker, tNormal, "NORMAL");
        createTopic(namesrv, broker, tFifo, "FIFO");
        createTopic(namesrv, broker, tDelay, "DELAY");
        createTopic(namesrv, broker, tTxn, "TRANSACTION");
        createOrderlyGroup(namesrv, broker, base + "_ORDERLY");

        ClientServiceProvider p = ClientServiceProvider.loadService();
        ClientConfiguration cc = ClientConfiguration.newBuilder().setEndpoints(grpc).enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(10)).build();

        // Push consumer first: it sees everything sent from now on.
        Map<String, Integer> pushed = new ConcurrentHashMap<>();
        Map<String, Long> pushedAt = new ConcurrentHashMap<>();
        Map<String, List<String>> fifoOrder = new ConcurrentHashMap<>();
        Map<String, FilterExpression> all = new HashMap<>();
        for (String t : List.of(tNormal, tFifo, tDelay, tTxn)) all.put(t, FilterExpression.SUB_ALL);
        PushConsumer push = p.newPushConsumerBuilder().setClientConfiguration(cc).setConsumerGroup(base + "_PUSH")
            .setSubscriptionExpressions(all).setMessageListener(mv -> {
                String id = mv.getMessageId().toString();
                pushed.merge(id, 1, Integer::sum);
                pushedAt.putIfAbsent(id, System.currentTimeMillis());
                mv.getMessageGroup().ifPresent(g -> fifoOrder.computeIfAbsent(g, k -> new ArrayList<>())
                    .add(StandardCharsets.UTF_8.decode(mv.getBody()).toString()));
                return ConsumeResult.SUCCESS;
            }).build();

        // FIFO consumption: a group that consumes orderly gets each message group's messages in send order.
        Map<String, List<String>> orderly = new ConcurrentHashMap<>();
        PushConsumer orderlyPush = p.newPushConsumerBuilder().setClientConfiguration(cc).setConsumerGroup(base + "_ORDERLY")
            .setSubscriptionExpressions(Map.of(tFifo, FilterExpression.SUB_ALL)).setMessageListener(mv -> {
                orderly.computeIfAbsent(mv.getMessageGroup().orElse(""), k -> new ArrayList<>())
                    .add(StandardCharsets.UTF_8.decode(mv.getBody()).toString());
                return ConsumeResult.SUCCESS;
            }).build();

        SimpleConsumer simple = p.newSimpleConsumerBuilder().setClientConfiguration(cc).setConsumerGroup(base + "_SIMPLE")
            .setAwaitDuration(Duration.ofSeconds(5))
            .setSubscriptionExpressions(Map.of(tNormal, new FilterExpression("TagA", FilterExpressionType.TAG))).build();

        AtomicInteger checks = new AtomicInteger();
        Producer producer = p.newProducerBuilder().setClientConfiguration(cc).setTopics(tNormal, tFifo, tDelay, tTxn)
            .setTransactionChecker(mv -> {
                checks.incrementAndGet();
                return TransactionResolution.COMMIT;
            }).build();

        Set<String> expect = new HashSet<>();
        Set<String> normalIds = new HashSet<>();
        for (int i = 0; i < NORMAL; i++) {
            Message m = p.newMessageBuilder().setTopic(tNormal).setTag("TagA").setKeys("key-" + i)
                .setBody(("normal-" + i).getBytes(StandardCharsets.UTF_8)).build();
            String id = producer.send(m).getMessageId().toString();
            expect.add(id);
            normalIds.add(id);
        }
        for (int i = 0; i < FIFO; i++) {
            Message m = p.newMessageBuilder().setTopic(tFifo).setTag("TagF").setMessageGroup("group-" + (i % 2))
                .setBody(String.valueOf(i).getBytes(StandardCharsets.UTF_8)).build();
            expect.add(producer.send(m).getMessageId().toString());
        }
        // The SDK's default: TLS (it trusts any certificate); rocketd's permissive port serves both.
        ClientConfiguration tls = ClientConfiguration.newBuilder().setEndpoints(grpc)
            .setRequestTimeout(Duration.ofSeconds(10)).build();
        try (Producer tlsProducer = p.newProducerBuilder().setClientConfiguration(tls).setTopics(tNormal).build()) {
            expect.add(tlsProducer.send(p.newMessageBuilder().setTopic(tNormal).setTag("TagTLS")
                .setBody("over TLS".getBytes(StandardCharsets.UTF_8)).build()).getMessageId().toString());
        }
        long deliverAt = System.currentTimeMillis() + 3000;
        String delayId = producer.send(p.newMessageBuilder().setTopic(tDelay).setTag("TagD").setDeliveryTimestamp(deliverAt)
            .setBody("delay".getBytes(StandardCharsets.UTF_8)).build()).getMessageId().toString();
        expect.add(delayId);

        Transaction commit = producer.beginTransaction();
        String committedId = producer.send(txnMessage(p, tTxn, "commit"), commit).getMessageId().toString();
        commit.commit();
        expect.add(committedId);
        Transaction rollback = producer.beginTransaction();
        String rolledBackId = producer.send(txnMessage(p, tTxn, "rollback"), rollback).getMessageId().toString();
        rollback.rollback();
        // Left open: the broker's check-back reaches the checker over telemetry, which commits it.
        Transaction open = producer.beginTransaction();
        String orphanId = producer.send(txnMessage(p, tTxn, "orphan"), open).getMessageId().toString();
        expect.add(orphanId);
        System.out.printf("sent %d normal, 1 normal over TLS, %d fifo, 1 delay, 3 transactional%n", NORMAL, FIFO);

        // SimpleConsumer: ack all but one; that one comes back after changeInvisibleDuration.
        Set<String> acked = new HashSet<>();
        String held = null;
        MessageView again = null;
        long until = System.currentTimeMillis() + WAIT.toMillis();
        while ((acked.size() < NORMAL - 1 || again == null) && System.currentTimeMillis() < until) {
            for (MessageView mv : simple.receive(16, Duration.ofSeconds(30))) {
                String id = mv.getMessageId().toString();
                if (!normalIds.contains(id)) fail("simple consumer got unknown message " + id);
                if (id.equals(held)) {
                    again = mv;
                } else if (mv.getDeliveryAttempt() != 1) {
                    fail("delivery of " + id + " has attempt " + mv.getDeliveryAttempt() + ", want 1");
                } else if (held == null) {
                    held = id;
                    simple.changeInvisibleDuration(mv, Duration.ofSeconds(1));
                } else if (!acked.add(id)) {
                    fail("simple consumer got acked message " + id + " again");
                } else {
                    simple.ack(mv);
                }
            }
        }
        if (acked.size() != NORMAL - 1) fail("simple consumer acked " + acked.size() + " of " + (NORMAL - 1));
        if (again == null) fail("message " + held + " was not redelivered after changeInvisibleDuration");
        if (again.getDeliveryAttempt() != 2) fail("redelivery has delivery attempt " + again.getDeliveryAttempt() + ", want 2");
        simple.ack(again);
        System.out.printf("simple consumer: acked %d, redelivered %s with attempt %d%n", acked.size(), held, again.getDeliveryAttempt());

        waitFor("push consumer gets every message", () -> pushed.keySet().containsAll(expect));
        waitFor("transaction checker called", () -> checks.get() > 0);
        for (Map.Entry<String, Integer> e : pushed.entrySet()) {
            if (!expect.contains(e.getKey())) fail("push consumer got unexpected message " + e.getKey()
                + (e.getKey().equals(rolledBackId) ? " (the rolled-back one)" : ""));
            if (e.getValue() != 1) fail("push consumer got " + e.getKey() + " " + e.getValue() + " times");
        }
        long delayLate = pushedAt.get(delayId) - deliverAt;
        if (delayLate < 0) fail("delay message delivered " + (-delayLate) + " ms early");
        System.out.printf("push consumer: %d messages once each; delay message %d ms after its time; checker called %d times; fifo %s%n",
            pushed.size(), delayLate, checks.get(), fifoOrder);

        waitFor("orderly push consumer gets every FIFO message",
            () -> orderly.values().stream().mapToInt(List::size).sum() >= FIFO);
        Map<String, List<String>> wantOrder = Map.of("group-0", List.of("0", "2", "4"), "group-1", List.of("1", "3", "5"));
        if (!orderly.equals(wantOrder)) fail("orderly push consumer got " + orderly + ", want " + wantOrder);
        System.out.printf("orderly push consumer: %s%n", orderly);

        orderlyPush.close();
        push.close();
        simple.close();
        producer.close();
        System.out.println("PASS");
        System.exit(0);
    }

    static Message txnMessage(ClientServiceProvider p, String topic, String body) {
        return p.newMessageBuilder().setTopic(topic).setTag("TagT").setBody(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    static void createTopic(String namesrv, String broker, String topic, String type) throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(namesrv);
        admin.setInstanceName("grpccheck-admin-" + type);
        admin.start();
        try {
            TopicConfig tc = new TopicConfig(topic, 4, 4, 6);
            tc.setAttributes(Map.of("+message.type", type));
            admin.createAndUpdateTopicConfig(broker, tc);
        } finally {
            admin.shutdown();
        }
    }

    static void createOrderlyGroup(String namesrv, String broker, String group) throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(namesrv);
        admin.setInstanceName("grpccheck-admin-group");
        admin.start();
        try {
            SubscriptionGroupConfig sgc = new SubscriptionGroupConfig();
            sgc.setGroupName(group);
            sgc.setConsumeMessageOrderly(true);
            admin.createAndUpdateSubscriptionGroupConfig(broker, sgc);
        } finally {
            admin.shutdown();
        }
    }

    static void waitFor(String what, BooleanSupplier cond) throws InterruptedException {
        long until = System.currentTimeMillis() + WAIT.toMillis();
        while (!cond.getAsBoolean()) {
            if (System.currentTimeMillis() > until) fail("timed out: " + what);
            Thread.sleep(50);
        }
    }

    static void fail(String why) {
        System.out.println("FAIL: " + why);
        System.exit(1);
    }
}
