package io.rocketd.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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
 * The VIP channel: with com.rocketmq.sendMessageWithVIPChannel=true (the
 * default of clients before 4.5.1 and of rocketmq-dashboard) the client
 * sends to the broker's listenPort-2 (MixAll.brokerVIPChannel). Sync,
 * async, oneway and batch sends must succeed there (the client has no
 * fallback: with nothing on listenPort-2 each send fails), and every
 * message must arrive at a consumer.
 *
 * <p>Usage: VipCheck NAMESRV_ADDR TOPIC BROKER_ADDR. Exit code 0 when every
 * check passes.
 */
public final class VipCheck {
    private static final int EACH = 10;
    private static final long WAIT_MS = 60_000;

    private final String namesrv;
    private final String topic;
    private final String runId = Long.toString(System.currentTimeMillis(), 36);
    private final List<String> failures = new ArrayList<>();

    private VipCheck(String namesrv, String topic) {
        this.namesrv = namesrv;
        this.topic = topic;
    }

    public static void main(String[] args) {
        CheckMain.run("VipCheck", args, 3, true, a -> {
            VipCheck check = new VipCheck(a[0], a[1]);
            int split = a[2].lastIndexOf(':');
            System.out.printf("broker %s, VIP channel %s:%d%n", a[2], a[2].substring(0, split),
                Integer.parseInt(a[2].substring(split + 1)) - 2);
            return () -> {
                check.run();
                return check.report();
            };
        });
    }

    private void run() throws Exception {
        Set<String> want = ConcurrentHashMap.newKeySet();
        Set<String> got = ConcurrentHashMap.newKeySet();

        DefaultMQProducer producer = new DefaultMQProducer("vip_p_" + runId);
        producer.setNamesrvAddr(namesrv);
        producer.setInstanceName("vip_p_" + runId);
        producer.setRetryTimesWhenSendFailed(0);
        producer.setRetryTimesWhenSendAsyncFailed(0);
        if (!producer.isVipChannelEnabled()) {
            fail("the client ignored com.rocketmq.sendMessageWithVIPChannel=true");
        }
        producer.start();
        long t0 = System.currentTimeMillis();
        try {
            for (int i = 0; i < EACH; i++) {
                String body = "sync-" + runId + "-" + i;
                SendResult r = producer.send(msg(body), 5000);
                if (r.getSendStatus() != SendStatus.SEND_OK) {
                    fail(body + ": " + r.getSendStatus());
                }
                want.add(body);
            }
            CountDownLatch async = new CountDownLatch(EACH);
            for (int i = 0; i < EACH; i++) {
                String body = "async-" + runId + "-" + i;
                want.add(body);
                producer.send(msg(body), new SendCallback() {
                    @Override
                    public void onSuccess(SendResult r) {
                        async.countDown();
                    }

                    @Override
                    public void onException(Throwable e) {
                        fail(body + ": " + e);
                        async.countDown();
                    }
                }, 5000);
            }
            if (!async.await(30, TimeUnit.SECONDS)) {
                fail("async sends not all answered");
            }
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < EACH; i++) {
                String body = "batch-" + runId + "-" + i;
                batch.add(msg(body));
                want.add(body);
            }
            SendResult br = producer.send(batch, 5000);
            if (br.getSendStatus() != SendStatus.SEND_OK) {
                fail("batch: " + br.getSendStatus());
            }
            String oneway = "oneway-" + runId;
            producer.sendOneway(msg(oneway));
            want.add(oneway);
        } finally {
            producer.shutdown();
        }
        System.out.printf("sent %d messages through the VIP channel in %d ms%n", want.size(), System.currentTimeMillis() - t0);

        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("vip_c_" + runId);
        consumer.setNamesrvAddr(namesrv);
        consumer.setInstanceName("vip_c_" + runId);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                got.add(new String(m.getBody(), StandardCharsets.UTF_8));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        long t1 = System.currentTimeMillis();
        consumer.start();
        try {
            while (!got.containsAll(want) && System.currentTimeMillis() - t1 < WAIT_MS) {
                Thread.sleep(50);
            }
        } finally {
            consumer.shutdown();
        }
        int arrived = 0;
        for (String w : want) {
            if (got.contains(w)) {
                arrived++;
            }
        }
        System.out.printf("consumed %d of %d in %d ms%n", arrived, want.size(), System.currentTimeMillis() - t1);
        if (arrived != want.size()) {
            fail((want.size() - arrived) + " message(s) sent through the VIP channel never arrived");
        }
    }

    private Message msg(String body) {
        return new Message(topic, "vip", body.getBytes(StandardCharsets.UTF_8));
    }

    private synchronized void fail(String what) {
        System.out.println("FAIL " + what);
        failures.add(what);
    }

    private int report() {
        if (failures.isEmpty()) {
            System.out.println("java VIP-channel check: OK");
            return 0;
        }
        System.out.println("java VIP-channel check: " + failures.size() + " failure(s)");
        return 1;
    }
}
