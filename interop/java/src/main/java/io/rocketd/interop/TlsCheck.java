package io.rocketd.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.netty.TlsSystemConfig;

/**
 * Against a rocketd that enforces TLS and requires client certificates
 * (interop/java/tls.sh starts one): a producer and a push consumer with
 * setUseTLS(true), verifying the server against the CA and presenting the
 * client certificate given as tls.client.* system properties, send and
 * receive; a plaintext producer is refused; a producer presenting a
 * certificate from another CA (the tls.config.file named by the system
 * property rocketd.tls.rogueConfigFile) is refused.
 *
 * <p>Usage: TlsCheck NAMESRV_ADDR TOPIC [BROKER_ADDR]. Exit code 0 when
 * every check passes, 1 otherwise.
 */
public final class TlsCheck {
    private static final int COUNT = 10;
    private static final long WAIT_MS = 60_000;

    private final List<String> failures = new ArrayList<>();
    private final String namesrv;
    private final String topic;
    private final String runId = Long.toString(System.currentTimeMillis(), 36);

    private TlsCheck(String namesrv, String topic) {
        this.namesrv = namesrv;
        this.topic = topic;
    }

    public static void main(String[] args) {
        CheckMain.run("TlsCheck", args, 2, false, a -> {
            TlsCheck c = new TlsCheck(a[0], a[1]);
            return () -> {
                c.run();
                if (!c.failures.isEmpty()) {
                    c.failures.forEach(f -> System.err.println("FAIL: " + f));
                    return 1;
                }
                System.out.println("TlsCheck: all checks passed");
                return 0;
            };
        });
    }

    private DefaultMQProducer producer(String name, boolean tls) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("tls_pg_" + name + "_" + runId);
        p.setNamesrvAddr(namesrv);
        p.setInstanceName("tls_" + name + "_" + runId);
        p.setUseTLS(tls);
        // A refused producer fails fast; an accepted one gets time for its
        // first handshakes, slow on a cold JVM and a busy machine (RSA,
        // JIT): a request that times out mid-handshake closes the channel.
        p.setRetryTimesWhenSendFailed(tls && !name.equals("rogue") ? 2 : 0);
        p.setSendMsgTimeout(tls && !name.equals("rogue") ? 15000 : 3000);
        p.start();
        return p;
    }

    /** Sends one message and returns what went wrong, or null. */
    private static String trySend(DefaultMQProducer p, Message m) {
        try {
            SendResult r = p.send(m);
            return r.getSendStatus() == SendStatus.SEND_OK ? null : "status " + r.getSendStatus();
        } catch (Exception e) {
            return e.toString();
        }
    }

    private void run() throws Exception {
        // 1. Produce over TLS. A cold JVM on a busy machine may take longer
        // for its first handshakes than the client's 3 s route-lookup
        // timeout (the JDK's TLS setup alone takes seconds there): warm
        // up until one message goes through, then every send must.
        DefaultMQProducer p = producer("tls", true);
        long warm = System.nanoTime();
        String first = "";
        for (int i = 0; first != null && System.nanoTime() - warm < TimeUnit.MILLISECONDS.toNanos(WAIT_MS); i++) {
            first = trySend(p, new Message(topic, ("warm-up-" + i).getBytes(StandardCharsets.UTF_8)));
        }
        System.out.printf("first TLS send after %d ms%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - warm));
        if (first != null) {
            failures.add("no send over TLS within " + WAIT_MS + " ms: " + first);
            p.shutdown();
            return;
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < COUNT; i++) {
            String err = trySend(p, new Message(topic, ("tls-" + runId + "-" + i).getBytes(StandardCharsets.UTF_8)));
            if (err != null) {
                failures.add("send " + i + " over TLS: " + err);
            }
        }
        System.out.printf("sent %d messages over TLS in %d ms%n", COUNT, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        p.shutdown();

        // 2. Consume them over TLS.
        Set<String> got = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("tls_cg_" + runId);
        consumer.setNamesrvAddr(namesrv);
        consumer.setInstanceName("tls_c_" + runId);
        consumer.setUseTLS(true);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                String body = new String(m.getBody(), StandardCharsets.UTF_8);
                if (body.startsWith("tls-")) {
                    got.add(body);
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        long deadline = System.currentTimeMillis() + WAIT_MS;
        while (got.size() < COUNT && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        consumer.shutdown();
        System.out.printf("consumed %d of %d over TLS%n", got.size(), COUNT);
        if (got.size() != COUNT) {
            failures.add("consumed " + got.size() + " of " + COUNT + " over TLS");
        }

        // 3. A plaintext producer is refused.
        DefaultMQProducer plain = producer("plain", false);
        String err = trySend(plain, new Message(topic, "plaintext".getBytes(StandardCharsets.UTF_8)));
        plain.shutdown();
        System.out.println("plaintext send: " + (err == null ? "served" : "refused: " + err));
        if (err == null) {
            failures.add("a plaintext producer was served in enforcing mode");
        }

        // 4. A certificate from another CA is refused. TlsHelper reads
        // tls.config.file each time a client builds its TLS context.
        String rogue = System.getProperty("rocketd.tls.rogueConfigFile");
        if (rogue == null) {
            failures.add("no -Drocketd.tls.rogueConfigFile given");
            return;
        }
        TlsSystemConfig.tlsConfigFile = rogue;
        DefaultMQProducer bad = producer("rogue", true);
        err = trySend(bad, new Message(topic, "rogue".getBytes(StandardCharsets.UTF_8)));
        bad.shutdown();
        System.out.println("untrusted client certificate: " + (err == null ? "served" : "refused: " + err));
        if (err == null) {
            failures.add("a client with an untrusted certificate was served");
        }
    }
}
