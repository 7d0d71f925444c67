package io.rocketd.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * SQL92 filtering with the official Java client (rocketd with
 * enablePropertyFilter=true): a push consumer subscribed with
 * MessageSelector.bySql starts (the broker answers its CHECK_CLIENT_CONFIG
 * with SUCCESS) and receives exactly the messages whose properties match,
 * TAGS included; a consumer with a bad expression is refused at start with
 * SUBSCRIPTION_PARSE_FAILED (23). The topic must have one queue: once the
 * last message (a match) arrives, every earlier one was delivered or
 * filtered.
 *
 * <p>Usage: SqlFilterCheck NAMESRV_ADDR TOPIC [BROKER_ADDR]. Exit code 0 when every check passes.
 */
public final class SqlFilterCheck {
    private static final int COUNT = 30;
    private static final long WAIT_MS = 60_000;
    private static final String EXPR = "a > 9 AND TAGS = 'TagB' AND (region STARTSWITH 'eu' OR a IN ('11', '13'))";

    private final String namesrv;
    private final String topic;
    private final String runId = Long.toString(System.currentTimeMillis(), 36);
    private final List<String> failures = new ArrayList<>();

    private SqlFilterCheck(String namesrv, String topic) {
        this.namesrv = namesrv;
        this.topic = topic;
    }

    public static void main(String[] args) {
        CheckMain.run("SqlFilterCheck", args, 2, false, a -> {
            SqlFilterCheck check = new SqlFilterCheck(a[0], a[1]);
            return () -> {
                check.run();
                return check.report();
            };
        });
    }

    /** Java's own verdict for message i, written out (EXPR above). */
    private static boolean matches(int i) {
        return i > 9 && i % 2 == 1 && (region(i).startsWith("eu") || i == 11 || i == 13);
    }

    private static String region(int i) {
        return new String[] {"eu-west", "us-east", "eu-north"}[i % 3];
    }

    private void run() throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer("interop_sql_p_" + runId);
        producer.setNamesrvAddr(namesrv);
        producer.setVipChannelEnabled(false);
        producer.setSendMsgTimeout(10_000);
        producer.start();
        Set<String> expected = ConcurrentHashMap.newKeySet();
        String last = null;
        try {
            for (int i = 0; i < COUNT; i++) {
                String body = "sql " + i + " " + runId;
                Message m = new Message(topic, i % 2 == 1 ? "TagB" : "TagA", body.getBytes(StandardCharsets.UTF_8));
                m.putUserProperty("a", Integer.toString(i));
                m.putUserProperty("region", region(i));
                SendResult r = producer.send(m);
                expect(r.getSendStatus() == SendStatus.SEND_OK, "send " + i + ": " + r);
                if (matches(i)) {
                    expected.add(body);
                    last = body;
                }
            }
        } finally {
            producer.shutdown();
        }
        expect(last != null && last.startsWith("sql " + (COUNT - 1) + " "), "the last message must match");
        consume(expected, last);
        refused();
    }

    private void consume(Set<String> expected, String last) throws Exception {
        Set<String> got = ConcurrentHashMap.newKeySet();
        Set<String> unexpected = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("interop_sql_c_" + runId);
        consumer.setNamesrvAddr(namesrv);
        consumer.setVipChannelEnabled(false);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, MessageSelector.bySql(EXPR));
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                String body = new String(m.getBody(), StandardCharsets.UTF_8);
                if (expected.contains(body)) {
                    got.add(body);
                } else {
                    unexpected.add(body);
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        try {
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (!got.contains(last) && System.currentTimeMillis() < deadline) {
                TimeUnit.MILLISECONDS.sleep(100);
            }
        } finally {
            consumer.shutdown();
        }
        System.out.printf("SqlFilterCheck: %s: received %d of %d matching messages, %d not matching%n",
            EXPR, got.size(), expected.size(), unexpected.size());
        expect(got.size() == expected.size(), "received " + got.size() + " of " + expected.size() + " matching messages");
        expect(unexpected.isEmpty(), "received messages that do not match: " + unexpected);
    }

    private void refused() {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("interop_sql_bad_" + runId);
        consumer.setNamesrvAddr(namesrv);
        consumer.setVipChannelEnabled(false);
        try {
            consumer.subscribe(topic, MessageSelector.bySql("a > AND"));
            consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
            consumer.start();
            failures.add("a consumer with the bad expression 'a > AND' started");
        } catch (MQClientException e) {
            MQClientException cause = e;
            while (cause.getResponseCode() != 23 && cause.getCause() instanceof MQClientException) {
                cause = (MQClientException) cause.getCause();
            }
            System.out.printf("SqlFilterCheck: bad expression refused at start: code %d, %s%n",
                cause.getResponseCode(), cause.getErrorMessage());
            expect(cause.getResponseCode() == 23, "bad expression refused with code " + cause.getResponseCode() + ", want 23: " + e);
        } finally {
            consumer.shutdown();
        }
    }

    private void expect(boolean ok, String what) {
        if (!ok) {
            failures.add(what);
        }
    }

    private int report() {
        if (failures.isEmpty()) {
            System.out.println("SqlFilterCheck: PASS");
            return 0;
        }
        for (String f : failures) {
            System.out.println("SqlFilterCheck: FAIL " + f);
        }
        return 1;
    }
}
