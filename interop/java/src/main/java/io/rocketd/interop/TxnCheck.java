package io.rocketd.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Transactional messages with the official Java client's
 * TransactionMQProducer: a local transaction that commits is delivered once,
 * one that rolls back never; an unknown one is checked back by the broker
 * and delivered once when the check answers commit, never when it answers
 * rollback. rocketd must run with a short transactionCheckInterval and
 * transactionTimeOut (run.sh passes them).
 *
 * <p>Usage: TxnCheck NAMESRV_ADDR TOPIC. Exit code 0 when every check passes.
 */
public final class TxnCheck {
    private static final int EACH = 3;
    private static final long WAIT_MS = 60_000;

    private final String namesrv;
    private final String topic;
    private final String runId = Long.toString(System.currentTimeMillis(), 36);
    private final List<String> failures = new ArrayList<>();
    /** Checks received, by the message's "checkId" property. */
    private final Map<String, AtomicInteger> checks = new ConcurrentHashMap<>();

    private TxnCheck(String namesrv, String topic) {
        this.namesrv = namesrv;
        this.topic = topic;
    }

    public static void main(String[] args) {
        CheckMain.run("TxnCheck", args, 2, false, a -> {
            TxnCheck check = new TxnCheck(a[0], a[1]);
            return () -> {
                check.run();
                return check.report();
            };
        });
    }

    /** The local transaction's outcome and the check's answer, by id prefix. */
    private static LocalTransactionState local(String id) {
        if (id.startsWith("commit-")) {
            return LocalTransactionState.COMMIT_MESSAGE;
        }
        if (id.startsWith("rollback-")) {
            return LocalTransactionState.ROLLBACK_MESSAGE;
        }
        return LocalTransactionState.UNKNOW;
    }

    private static LocalTransactionState checked(String id) {
        return id.startsWith("uc-") ? LocalTransactionState.COMMIT_MESSAGE : LocalTransactionState.ROLLBACK_MESSAGE;
    }

    private void run() throws Exception {
        TransactionMQProducer producer = new TransactionMQProducer("interop_txn_" + runId);
        producer.setNamesrvAddr(namesrv);
        producer.setVipChannelEnabled(false);
        producer.setSendMsgTimeout(10_000);
        producer.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                return local(msg.getUserProperty("checkId"));
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                String id = msg.getUserProperty("checkId");
                checks.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                return checked(id);
            }
        });
        producer.start();
        Set<String> expected = ConcurrentHashMap.newKeySet();
        List<String> all = new ArrayList<>();
        try {
            for (String prefix : new String[] {"commit-", "rollback-", "uc-", "ur-"}) {
                for (int i = 0; i < EACH; i++) {
                    String id = prefix + i;
                    Message m = new Message(topic, "TxnTag", ("txn " + id + " " + runId).getBytes(StandardCharsets.UTF_8));
                    m.putUserProperty("checkId", id);
                    TransactionSendResult r = producer.sendMessageInTransaction(m, null);
                    expect(r.getSendStatus() == SendStatus.SEND_OK, id + ": send " + r);
                    expect(r.getLocalTransactionState() == local(id), id + ": local state " + r.getLocalTransactionState());
                    all.add(id);
                    if (prefix.equals("commit-") || prefix.equals("uc-")) {
                        expected.add(id);
                    }
                }
            }
            consume(expected, all);
        } finally {
            producer.shutdown();
        }
        for (String id : all) {
            int n = checks.getOrDefault(id, new AtomicInteger()).get();
            if (id.startsWith("uc-") || id.startsWith("ur-")) {
                expect(n >= 1, id + ": never checked");
            } else {
                expect(n == 0, id + ": checked " + n + " times though its local transaction ended");
            }
        }
    }

    private void consume(Set<String> expected, List<String> all) throws Exception {
        Map<String, MessageExt> got = new ConcurrentHashMap<>();
        AtomicInteger duplicates = new AtomicInteger();
        Set<String> unexpected = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("interop_txn_c_" + runId);
        consumer.setNamesrvAddr(namesrv);
        consumer.setVipChannelEnabled(false);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                String id = m.getUserProperty("checkId");
                if (id == null || !expected.contains(id)) {
                    unexpected.add(String.valueOf(id));
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
            // A few more check rounds: a rolled back or repeated message would show.
            Thread.sleep(3000);
        } finally {
            consumer.shutdown();
        }
        System.out.printf("transactions: %d of %d committed messages in %d ms, %d duplicates, %d unexpected, checks %s%n",
                got.size(), expected.size(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                duplicates.get(), unexpected.size(), checks);
        for (String id : all) {
            MessageExt m = got.get(id);
            if (!expected.contains(id)) {
                continue;
            }
            if (m == null) {
                fail(id + ": committed message not received");
                continue;
            }
            expect(topic.equals(m.getTopic()), id + ": topic " + m.getTopic());
            expect("TxnTag".equals(m.getTags()), id + ": tags " + m.getTags());
            expect("true".equals(m.getProperty("TRAN_MSG")), id + ": TRAN_MSG " + m.getProperty("TRAN_MSG"));
        }
        expect(duplicates.get() == 0, duplicates.get() + " duplicate deliveries");
        expect(unexpected.isEmpty(), "delivered though not committed: " + unexpected);
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
            System.out.println("java transaction check: OK");
            return 0;
        }
        System.out.println("java transaction check: " + failures.size() + " failure(s)");
        failures.forEach(f -> System.out.println("  FAIL " + f));
        return 1;
    }
}
