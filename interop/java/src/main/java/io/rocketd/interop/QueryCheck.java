package io.rocketd.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Message queries with the official Java client, as mqadmin and the
 * dashboard use them: queryMessage by a KEYS entry (QUERY_MESSAGE, fanned
 * out by the client over the topic's brokers and filtered by key),
 * viewMessage by the unique message id (QUERY_MESSAGE with
 * _UNIQUE_KEY_QUERY) and by the offset message id (VIEW_MESSAGE_BY_ID), and
 * the trace of a message sent with enableMsgTrace=true, found by querying
 * RMQ_SYS_TRACE_TOPIC with the message id as key (QueryMsgTraceById).
 * rocketd must run with traceTopicEnable=true (run.sh sets it).
 *
 * <p>Usage: QueryCheck NAMESRV_ADDR TOPIC. Exit code 0 when every check passes.
 */
public final class QueryCheck {
    private static final int N = 5;
    private static final long WAIT_MS = 30_000;
    private static final String TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC";

    private final String namesrv;
    private final String topic;
    private final String runId = Long.toString(System.currentTimeMillis(), 36);
    private final List<String> failures = new ArrayList<>();

    private QueryCheck(String namesrv, String topic) {
        this.namesrv = namesrv;
        this.topic = topic;
    }

    public static void main(String[] args) {
        CheckMain.run("QueryCheck", args, 2, false, a -> {
            QueryCheck check = new QueryCheck(a[0], a[1]);
            return () -> {
                check.run();
                return check.report();
            };
        });
    }

    private void run() throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer("QueryCheckP_" + runId);
        producer.setNamesrvAddr(namesrv);
        producer.setVipChannelEnabled(false);
        producer.setSendMsgTimeout(10_000);
        producer.start();
        try {
            checkQueries(producer);
        } finally {
            producer.shutdown();
        }
        checkTrace();
    }

    private void checkQueries(DefaultMQProducer producer) throws Exception {
        String common = "common-" + runId;
        List<SendResult> sent = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            Message m = new Message(topic, "TagA", ("body-" + i).getBytes(StandardCharsets.UTF_8));
            m.setKeys("key-" + runId + "-" + i + " " + common);
            SendResult r = producer.send(m);
            if (r.getSendStatus() != SendStatus.SEND_OK) {
                fail("send " + i + ": " + r.getSendStatus());
            }
            sent.add(r);
        }
        long begin = System.currentTimeMillis() - 3_600_000L;

        // By one key: exactly its message (the index is built by dispatch:
        // poll until it is there).
        long t0 = System.nanoTime();
        List<MessageExt> one = queryUntil(producer, topic, "key-" + runId + "-2", 32, begin, 1);
        System.out.printf("query by key: %d message(s) in %d ms%n", one.size(), (System.nanoTime() - t0) / 1_000_000);
        if (one.size() != 1 || !"body-2".equals(body(one.get(0)))) {
            fail("query by key: " + describe(one));
        }
        List<MessageExt> all = queryUntil(producer, topic, common, 32, begin, N);
        System.out.printf("query by shared key: %d message(s)%n", all.size());
        if (all.size() != N) {
            fail("query by shared key: " + describe(all));
        }
        List<MessageExt> two = producer.queryMessage(topic, common, 2, begin, Long.MAX_VALUE).getMessageList();
        if (two.size() != 2) {
            fail("query with maxNum 2: " + describe(two));
        }
        try {
            List<MessageExt> none = producer.queryMessage(topic, "absent-" + runId, 32, begin, Long.MAX_VALUE)
                .getMessageList();
            fail("query of an absent key: " + describe(none));
        } catch (MQClientException e) {
            // The client's answer when every broker says QUERY_NOT_FOUND.
            if (e.getResponseCode() != 208) {
                fail("query of an absent key: " + e);
            }
        }

        // By the unique message id (UNIQ_KEY, QUERY_MESSAGE with the
        // unique-key flag) and by the offset message id (VIEW_MESSAGE_BY_ID).
        SendResult third = sent.get(3);
        MessageExt byUniq = producer.viewMessage(topic, third.getMsgId());
        if (byUniq == null || !"body-3".equals(body(byUniq)) || !third.getMsgId().equals(byUniq.getMsgId())) {
            fail("view by unique id " + third.getMsgId() + ": " + byUniq);
        } else {
            System.out.println("view by unique id: " + byUniq.getMsgId() + " OK");
        }
        MessageExt byOffset = producer.viewMessage(topic, third.getOffsetMsgId());
        if (byOffset == null || !"body-3".equals(body(byOffset))) {
            fail("view by offset id " + third.getOffsetMsgId() + ": " + byOffset);
        } else {
            System.out.println("view by offset id: " + third.getOffsetMsgId() + " OK");
        }
    }

    /**
     * A producer with enableMsgTrace=true sends its traces to
     * RMQ_SYS_TRACE_TOPIC keyed by the message id: find them as
     * mqadmin QueryMsgTraceById does.
     */
    private void checkTrace() throws Exception {
        DefaultMQProducer traced = new DefaultMQProducer("QueryCheckTraceP_" + runId, true, null);
        traced.setNamesrvAddr(namesrv);
        traced.setVipChannelEnabled(false);
        traced.setSendMsgTimeout(10_000);
        traced.start();
        DefaultMQProducer querier = new DefaultMQProducer("QueryCheckQ_" + runId);
        querier.setNamesrvAddr(namesrv);
        querier.setVipChannelEnabled(false);
        querier.setSendMsgTimeout(10_000);
        querier.start();
        try {
            Message m = new Message(topic, "TagT", "traced".getBytes(StandardCharsets.UTF_8));
            m.setKeys("traced-" + runId);
            SendResult r = traced.send(m);
            String msgId = r.getMsgId();
            long t0 = System.nanoTime();
            List<MessageExt> traces = new ArrayList<>();
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (System.currentTimeMillis() < deadline) {
                try {
                    traces = querier.queryMessage(TRACE_TOPIC, msgId, 64, 0, System.currentTimeMillis()).getMessageList();
                } catch (Exception e) {
                    traces = new ArrayList<>(); // not traced yet: QUERY_NOT_FOUND everywhere
                }
                if (!traces.isEmpty()) {
                    break;
                }
                Thread.sleep(200);
            }
            boolean found = false;
            for (MessageExt t : traces) {
                String b = body(t);
                if (b.contains(msgId) && b.contains("Pub")) {
                    found = true;
                }
            }
            System.out.printf("trace of %s: %d trace message(s) in %d ms%n", msgId, traces.size(),
                (System.nanoTime() - t0) / 1_000_000);
            if (!found) {
                fail("no Pub trace for " + msgId + " in " + TRACE_TOPIC + ": " + describe(traces));
            }
        } finally {
            traced.shutdown();
            querier.shutdown();
        }
    }

    /** Queries until at least want messages are found or WAIT_MS passes. */
    private static List<MessageExt> queryUntil(DefaultMQProducer p, String topic, String key, int maxNum, long begin,
        int want) throws Exception {
        long deadline = System.currentTimeMillis() + WAIT_MS;
        List<MessageExt> got = new ArrayList<>();
        while (System.currentTimeMillis() < deadline) {
            try {
                QueryResult qr = p.queryMessage(topic, key, maxNum, begin, Long.MAX_VALUE);
                got = qr.getMessageList();
            } catch (Exception e) {
                got = new ArrayList<>(); // QUERY_NOT_FOUND from every broker
            }
            if (got.size() >= want) {
                return got;
            }
            Thread.sleep(100);
        }
        return got;
    }

    private static String body(MessageExt m) {
        return new String(m.getBody(), StandardCharsets.UTF_8);
    }

    private static String describe(List<MessageExt> ms) {
        List<String> out = new ArrayList<>();
        for (MessageExt m : ms) {
            out.add(m.getMsgId() + "[" + m.getKeys() + "]=" + body(m));
        }
        return out.toString();
    }

    private void fail(String what) {
        System.out.println("FAIL " + what);
        failures.add(what);
    }

    private int report() {
        if (failures.isEmpty()) {
            System.out.println("java query check: OK");
            return 0;
        }
        System.out.println("java query check: " + failures.size() + " failure(s)");
        failures.forEach(f -> System.out.println("  FAIL " + f));
        return 1;
    }
}
