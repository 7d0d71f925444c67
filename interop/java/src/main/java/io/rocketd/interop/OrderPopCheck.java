package io.rocketd.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.AckCallback;
import org.apache.rocketmq.client.consumer.AckResult;
import org.apache.rocketmq.client.consumer.AckStatus;
import org.apache.rocketmq.client.consumer.PopCallback;
import org.apache.rocketmq.client.consumer.PopResult;
import org.apache.rocketmq.client.consumer.PopStatus;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.header.AckMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.ExtraInfoUtil;
import org.apache.rocketmq.remoting.protocol.header.PopMessageRequestHeader;

/**
 * Orderly POP through the 5.x client's own API (rmq5 only; the remoting
 * push consumer never pops with order=true, the gRPC proxy does):
 * MQClientAPIImpl.popMessageAsync with order=true hands out a batch, then
 * nothing while it is unacked and invisible, then the same batch again
 * with each message's reconsume times set from orderCountInfo; once
 * acked (ackMessageAsync, receipt handles with reviveQid 999) the next
 * messages follow, in order.
 *
 * <p>Usage: OrderPopCheck NAMESRV_ADDR TOPIC BROKER_ADDR. The topic needs
 * 1 queue. Exit code 0 when every check passes.
 */
public final class OrderPopCheck {
    private static final long INVISIBLE_MS = 2_000;

    private final String namesrv;
    private final String topic;
    private final String broker;
    private final String runId = Long.toString(System.currentTimeMillis(), 36);
    private final List<String> failures = new ArrayList<>();
    private MQClientAPIImpl api;
    private String brokerName;

    private OrderPopCheck(String namesrv, String topic, String broker) {
        this.namesrv = namesrv;
        this.topic = topic;
        this.broker = broker;
    }

    public static void main(String[] args) {
        CheckMain.run("OrderPopCheck", args, 3, false, a -> {
            OrderPopCheck check = new OrderPopCheck(a[0], a[1], a[2]);
            return () -> {
                check.run();
                return check.report();
            };
        });
    }

    private void run() throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer("interop_opop_p_" + runId);
        producer.setNamesrvAddr(namesrv);
        producer.setVipChannelEnabled(false);
        producer.start();
        String group = "interop_opop_" + runId;
        try {
            api = producer.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl();
            List<MessageQueue> mqs = producer.fetchPublishMessageQueues(topic);
            expect(mqs.size() == 1, "topic has " + mqs.size() + " queues, want 1");
            MessageQueue mq = mqs.get(0);
            brokerName = mq.getBrokerName();
            for (int i = 0; i < 4; i++) {
                SendResult r = producer.send(new Message(topic, "O", ("o" + i).getBytes(StandardCharsets.UTF_8)), mq);
                expect(r.getSendStatus() == SendStatus.SEND_OK, "send " + r);
            }

            List<MessageExt> b1 = pop(group);
            expect(bodies(b1).equals(List.of("o0", "o1")), "first batch " + bodies(b1));
            for (MessageExt m : b1) {
                String[] ei = ExtraInfoUtil.split(m.getProperty("POP_CK"));
                expect(ExtraInfoUtil.isOrder(ei), "POP_CK " + m.getProperty("POP_CK") + " is not an orderly handle");
                expect(m.getReconsumeTimes() == 0, "first delivery reconsume times " + m.getReconsumeTimes());
            }
            List<MessageExt> blocked = pop(group);
            expect(blocked.isEmpty(), "popped " + bodies(blocked) + " while the batch is unacked");

            long deadline = System.currentTimeMillis() + 20_000;
            List<MessageExt> again = List.of();
            while (again.isEmpty() && System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
                again = pop(group);
            }
            expect(bodies(again).equals(List.of("o0", "o1")), "the unacked batch again: " + bodies(again));
            for (MessageExt m : again) {
                expect(m.getReconsumeTimes() == 1, m.getKeys() + " again with reconsume times " + m.getReconsumeTimes() + ", want 1");
                ack(group, m);
            }
            System.out.printf("orderly pop: %s, blocked, %s again (reconsume times %d), acked%n",
                    bodies(b1), bodies(again), again.isEmpty() ? -1 : again.get(0).getReconsumeTimes());
            List<MessageExt> b2 = pop(group);
            expect(bodies(b2).equals(List.of("o2", "o3")), "second batch " + bodies(b2));
            for (MessageExt m : b2) {
                ack(group, m);
            }
            System.out.printf("orderly pop: then %s%n", bodies(b2));
        } finally {
            producer.shutdown();
        }
    }

    private List<MessageExt> pop(String group) throws Exception {
        PopMessageRequestHeader h = new PopMessageRequestHeader();
        h.setConsumerGroup(group);
        h.setTopic(topic);
        h.setQueueId(0);
        h.setMaxMsgNums(2);
        h.setInvisibleTime(INVISIBLE_MS);
        h.setPollTime(0);
        h.setBornTime(System.currentTimeMillis());
        h.setInitMode(1);
        h.setOrder(true);
        h.setExpType("TAG");
        h.setExp("*");
        CompletableFuture<PopResult> f = new CompletableFuture<>();
        api.popMessageAsync(brokerName, broker, h, 5_000, new PopCallback() {
            @Override
            public void onSuccess(PopResult r) {
                f.complete(r);
            }

            @Override
            public void onException(Throwable e) {
                f.completeExceptionally(e);
            }
        });
        PopResult r = f.get(10, TimeUnit.SECONDS);
        if (r.getPopStatus() != PopStatus.FOUND) {
            return List.of();
        }
        return r.getMsgFoundList();
    }

    private void ack(String group, MessageExt m) throws Exception {
        String ck = m.getProperty("POP_CK");
        String[] ei = ExtraInfoUtil.split(ck);
        AckMessageRequestHeader h = new AckMessageRequestHeader();
        h.setConsumerGroup(group);
        h.setTopic(ExtraInfoUtil.getRealTopic(ei, topic, group));
        h.setQueueId(ExtraInfoUtil.getQueueId(ei));
        h.setOffset(ExtraInfoUtil.getQueueOffset(ei));
        h.setExtraInfo(ck);
        CompletableFuture<AckResult> f = new CompletableFuture<>();
        api.ackMessageAsync(broker, 5_000, new AckCallback() {
            @Override
            public void onSuccess(AckResult r) {
                f.complete(r);
            }

            @Override
            public void onException(Throwable e) {
                f.completeExceptionally(e);
            }
        }, h);
        AckResult r = f.get(10, TimeUnit.SECONDS);
        expect(r.getStatus() == AckStatus.OK, "ack " + new String(m.getBody(), StandardCharsets.UTF_8) + ": " + r);
    }

    private static List<String> bodies(List<MessageExt> ms) {
        List<String> out = new ArrayList<>();
        for (MessageExt m : ms) {
            out.add(new String(m.getBody(), StandardCharsets.UTF_8));
        }
        return out;
    }

    private synchronized void expect(boolean ok, String what) {
        if (!ok) {
            failures.add(what);
        }
    }

    private int report() {
        if (failures.isEmpty()) {
            System.out.println("java orderly pop check: OK");
            return 0;
        }
        System.out.println("java orderly pop check: " + failures.size() + " failure(s)");
        failures.forEach(x -> System.out.println("  FAIL " + x));
        return 1;
    }
}
