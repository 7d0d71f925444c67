package io.rocketd.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.RequestTimeoutException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.client.producer.RequestCallback;
import org.apache.rocketmq.client.utils.MessageUtil;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Request-reply with the official Java client: DefaultMQProducer.request
 * (sync, and async with a RequestCallback) gets the reply a replier (a push
 * consumer on TOPIC answering with MessageUtil.createReplyMessage through
 * its own producer) sends to the cluster's reply topic; the broker pushes
 * it to the requester (PUSH_REPLY_MESSAGE_TO_CLIENT).
 *
 * <p>The first request is retried until the replier's consumer has its
 * queues and the requester's heartbeat has reached the broker (both clients
 * learn the broker from their first route; Java's clients heartbeat every
 * 30 s), for at most 45 s; the requests after it must each succeed at once.
 *
 * <p>Clients 5.3.1 to 5.3.3 count the reply latch down as soon as the
 * request is sent (apache/rocketmq #8272, undone by #9608): their
 * request(msg, timeout) fails with RequestTimeoutException at once, whatever
 * the broker. With those clients this check makes its sync round trips with
 * request(msg, selector, arg, callback, timeout), which is not affected,
 * waiting on the callback. Every client calls a request(msg, callback,
 * timeout) callback with null once the request is sent, then with the
 * reply: the async check waits for the reply.
 *
 * <p>Usage: ReplyCheck NAMESRV_ADDR TOPIC [BROKER_ADDR]. Exit code 0 when
 * every check passes.
 */
public final class ReplyCheck {
    private static final int SYNC_REQUESTS = 5;
    private static final long REQUEST_TIMEOUT_MS = 5_000;
    private static final long WARM_UP_MS = 45_000;

    private final String namesrv;
    private final String topic;
    private final String runId = Long.toString(System.currentTimeMillis(), 36);
    private final List<String> failures = new ArrayList<>();
    private static final String VERSION = MQVersion.getVersionDesc(MQVersion.CURRENT_VERSION);
    private static final boolean LATCH_BUG =
        VERSION.equals("V5_3_1") || VERSION.equals("V5_3_2") || VERSION.equals("V5_3_3");
    private static final MessageQueueSelector FIRST_QUEUE = (mqs, msg, arg) -> mqs.get(0);
    private DefaultMQProducer requester;

    private ReplyCheck(String namesrv, String topic) {
        this.namesrv = namesrv;
        this.topic = topic;
    }

    public static void main(String[] args) {
        CheckMain.run("ReplyCheck", args, 2, false, a -> {
            ReplyCheck check = new ReplyCheck(a[0], a[1]);
            return () -> {
                check.run();
                return check.report();
            };
        });
    }

    private void run() throws Exception {
        DefaultMQProducer replier = new DefaultMQProducer("reply_server_p_" + runId);
        replier.setNamesrvAddr(namesrv);
        replier.setInstanceName("replier_" + runId);
        replier.start();

        DefaultMQPushConsumer server = new DefaultMQPushConsumer("reply_server_" + runId);
        server.setNamesrvAddr(namesrv);
        server.setInstanceName("server_" + runId);
        server.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
        server.subscribe(topic, "*");
        AtomicReference<String> replyError = new AtomicReference<>();
        server.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                try {
                    byte[] body = ("re:" + new String(m.getBody(), StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
                    Message reply = MessageUtil.createReplyMessage(m, body);
                    replier.send(reply, 3000);
                } catch (Exception e) {
                    replyError.compareAndSet(null, e.toString());
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        server.start();

        if (LATCH_BUG) {
            System.out.println("client " + VERSION + ": request(msg, timeout) is broken there (apache/rocketmq #8272); "
                + "using request(msg, selector, arg, callback, timeout)");
        }
        requester = new DefaultMQProducer("requester_" + runId);
        requester.setNamesrvAddr(namesrv);
        requester.setInstanceName("requester_" + runId);
        requester.start();
        try {
            long t0 = System.currentTimeMillis();
            int attempts = 0;
            Message first = null;
            while (first == null && System.currentTimeMillis() - t0 < WARM_UP_MS) {
                attempts++;
                try {
                    first = call("warm-" + attempts);
                } catch (RequestTimeoutException e) {
                    // Not yet: consumer rebalance or requester heartbeat pending.
                }
            }
            if (first == null) {
                fail("no reply within " + WARM_UP_MS + " ms (" + attempts + " requests), replier error: " + replyError.get());
                return;
            }
            System.out.printf("first reply after %d ms, %d request(s)%n", System.currentTimeMillis() - t0, attempts);
            expectReply("warm-" + attempts, first);

            long t1 = System.currentTimeMillis();
            for (int i = 0; i < SYNC_REQUESTS; i++) {
                String id = "sync-" + i;
                try {
                    expectReply(id, call(id));
                } catch (RequestTimeoutException e) {
                    fail(id + ": " + e);
                }
            }
            System.out.printf("sync: %d requests answered in %d ms%n", SYNC_REQUESTS, System.currentTimeMillis() - t1);

            CountDownLatch done = new CountDownLatch(1);
            AtomicReference<Message> asyncReply = new AtomicReference<>();
            AtomicReference<Throwable> asyncError = new AtomicReference<>();
            long t2 = System.currentTimeMillis();
            AtomicInteger sentCallbacks = new AtomicInteger();
            RequestCallback cb = new RequestCallback() {
                @Override
                public void onSuccess(Message message) {
                    if (message == null) {
                        // Java clients call onSuccess(null) once the request
                        // is sent (executeRequestCallback on send success),
                        // then onSuccess(reply) when the reply arrives.
                        sentCallbacks.incrementAndGet();
                        return;
                    }
                    asyncReply.set(message);
                    done.countDown();
                }

                @Override
                public void onException(Throwable e) {
                    asyncError.set(e);
                    done.countDown();
                }
            };
            requester.request(request("async-0"), cb, REQUEST_TIMEOUT_MS);
            if (!done.await(REQUEST_TIMEOUT_MS + 5_000, TimeUnit.MILLISECONDS)) {
                fail("async request: callback never called");
            } else if (asyncError.get() != null) {
                fail("async request: " + asyncError.get());
            } else {
                expectReply("async-0", asyncReply.get());
                System.out.printf("async: answered in %d ms (%d onSuccess(null) on send)%n",
                    System.currentTimeMillis() - t2, sentCallbacks.get());
            }
            if (replyError.get() != null) {
                fail("replier: " + replyError.get());
            }
        } finally {
            requester.shutdown();
            server.shutdown();
            replier.shutdown();
        }
    }

    /** A synchronous request: request(msg, timeout), or its stand-in where that is broken. */
    private Message call(String id) throws Exception {
        if (!LATCH_BUG) {
            return requester.request(request(id), REQUEST_TIMEOUT_MS);
        }
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Message> reply = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        requester.request(request(id), FIRST_QUEUE, null, new RequestCallback() {
            @Override
            public void onSuccess(Message message) {
                if (message != null) {
                    reply.set(message);
                    done.countDown();
                }
            }

            @Override
            public void onException(Throwable e) {
                error.set(e);
                done.countDown();
            }
        }, REQUEST_TIMEOUT_MS);
        // The client's own timeout scan runs every second.
        done.await(REQUEST_TIMEOUT_MS + 2_000, TimeUnit.MILLISECONDS);
        if (error.get() instanceof RequestTimeoutException) {
            throw (RequestTimeoutException) error.get();
        }
        if (error.get() != null) {
            throw new Exception(error.get());
        }
        if (reply.get() == null) {
            throw new RequestTimeoutException(10006, "no callback within " + (REQUEST_TIMEOUT_MS + 2_000) + " ms");
        }
        return reply.get();
    }

    private Message request(String id) {
        return new Message(topic, "rpc", id.getBytes(StandardCharsets.UTF_8));
    }

    private void expectReply(String id, Message reply) {
        if (reply == null) {
            fail(id + ": null reply");
            return;
        }
        String body = new String(reply.getBody(), StandardCharsets.UTF_8);
        if (!body.equals("re:" + id)) {
            fail(id + ": reply body " + body);
        }
        if (!reply.getTopic().endsWith("_REPLY_TOPIC")) {
            fail(id + ": reply topic " + reply.getTopic());
        }
        if (reply.getProperty("PUSH_REPLY_TIME") == null) {
            fail(id + ": reply lacks PUSH_REPLY_TIME " + reply.getProperties());
        }
    }

    private void fail(String what) {
        System.out.println("FAIL " + what);
        failures.add(what);
    }

    private int report() {
        if (failures.isEmpty()) {
            System.out.println("java request-reply check: OK");
            return 0;
        }
        System.out.println("java request-reply check: " + failures.size() + " failure(s)");
        return 1;
    }
}
