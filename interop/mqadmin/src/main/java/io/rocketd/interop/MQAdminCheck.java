package io.rocketd.interop;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.apache.rocketmq.tools.command.MQAdminStartup;

/**
 * Runs Apache RocketMQ's mqadmin (rocketmq-tools) command by command in one
 * JVM against rocketd, and checks each command's output, not just that it
 * ran: the commands file holds one command a line,
 *
 * <pre>name | arguments | regex the output must contain | profiles | must|later</pre>
 *
 * (a bar separates fields only with blanks around it; one inside a regex has
 * none) with ${NS}, ${BROKER}, ${CLUSTER}, ${BROKER_NAME}, ${TOPIC}, ${GROUP},
 * ${KEY}, ${MSGID} (unique key), ${OFFSET_MSGID}, ${NOW_MS} substituted. A
 * line "@traffic" sends messages with keys (and their message traces)
 * through a producer and consumes them with a push consumer of ${GROUP}
 * that stays online. A line "@reconsumed" (after a resetOffsetByTime row)
 * checks that this consumer receives every one of them again. A line "@stream"
 * (after @traffic) keeps sending to ${TOPIC}, 20 messages a second until
 * the end, and waits until the broker's one-minute statistics of the topic
 * (VIEW_BROKER_STATS_DATA) show it: rows after it see non-zero TPS. Output that
 * contains an exception or "not supported" fails a command whatever the
 * regex says. Rows marked "later" run and are reported but do not fail the
 * check (the request-code map says which issue brings them).
 *
 * <p>Usage: MQAdminCheck NAMESRV_ADDR BROKER_ADDR COMMANDS_FILE PROFILE REPORT_FILE.
 * Exit code 0 when every "must" row passes.
 */
public final class MQAdminCheck {
    private static final Pattern VAR = Pattern.compile("\\$\\{([A-Z_]+)}");
    private static final int MESSAGES = 20;

    private static volatile boolean exiting;

    private final Map<String, String> vars = new HashMap<>();
    private final List<String> report = new ArrayList<>();
    private DefaultMQPushConsumer consumer;
    private DefaultMQProducer producer;
    private DefaultMQProducer streamProducer;
    private Thread stream;
    private volatile boolean streaming;
    /** How often ${GROUP}'s consumer received each @traffic body. */
    private final Map<String, AtomicInteger> received = new ConcurrentHashMap<>();
    private final AtomicInteger streamSent = new AtomicInteger();
    private final AtomicInteger streamFailed = new AtomicInteger();
    private volatile String streamError = "";
    private int mustFailures;

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: MQAdminCheck NAMESRV_ADDR BROKER_ADDR COMMANDS_FILE PROFILE REPORT_FILE");
            System.exit(2);
        }
        System.setProperty("com.rocketmq.sendMessageWithVIPChannel", "false");
        // A 4.x consumer told to reset its offsets (RESET_CONSUMER_CLIENT_OFFSET)
        // drops its queues, waits 10 s and takes them back at the next
        // rebalance: every second here instead of every 20 s (@reconsumed).
        System.setProperty("rocketmq.client.rebalance.waitInterval", "1000");
        // mqadmin's option parser calls System.exit on a bad command line;
        // one row must not end the whole check (run.sh passes
        // -Djava.security.manager=allow, which Java 17 needs for this).
        System.setSecurityManager(new SecurityManager() {
            @Override
            public void checkExit(int status) {
                if (!exiting) {
                    throw new SecurityException("mqadmin called System.exit(" + status + ")");
                }
            }

            @Override
            public void checkPermission(java.security.Permission perm) {
            }
        });
        MQAdminCheck check = new MQAdminCheck();
        int code;
        try {
            code = check.run(args[0], args[1], Path.of(args[2]), args[3], Path.of(args[4]));
        } catch (Throwable t) {
            t.printStackTrace();
            code = 1;
        } finally {
            check.stop();
        }
        exiting = true;
        System.exit(code);
    }

    private int run(String namesrv, String broker, Path commands, String profile, Path reportFile) throws Exception {
        String runId = Long.toString(System.currentTimeMillis(), 36);
        vars.put("NS", namesrv);
        vars.put("BROKER", broker);
        vars.put("CLUSTER", "DefaultCluster");
        vars.put("BROKER_NAME", "broker-a");
        vars.put("TOPIC", "MQA_" + profile + "_" + runId);
        vars.put("GROUP", "MQA_G_" + profile + "_" + runId);
        vars.put("KEY", "mqa-key-" + runId + "-3");
        report.add("| command | " + profile + " | what it checks |");
        report.add("|---|---|---|");
        PrintStream out = System.out;
        for (String line : Files.readAllLines(commands, StandardCharsets.UTF_8)) {
            line = line.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            if (line.equals("@traffic")) {
                traffic();
                continue;
            }
            if (line.equals("@stream")) {
                stream();
                continue;
            }
            if (line.equals("@reconsumed")) {
                reconsumed(out);
                continue;
            }
            String[] f = line.split("\\s+\\|\\s+", -1);
            if (f.length != 5) {
                throw new IllegalArgumentException("bad commands line: " + line);
            }
            if (!f[3].equals("all") && !List.of(f[3].split(",")).contains(profile)) {
                continue;
            }
            // "refused": a must row whose command fails on purpose; its
            // regex matches the error (which names the broker's code).
            runRow(out, f[0], subst(f[1]), subst(f[2]), !f[4].equals("later"), f[4].equals("refused"));
        }
        System.setOut(out);
        Files.write(reportFile, report, StandardCharsets.UTF_8);
        System.out.printf("mqadmin %s: %d must-pass command(s) failed%n", profile, mustFailures);
        return mustFailures == 0 ? 0 : 1;
    }

    private String subst(String s) {
        Matcher m = VAR.matcher(s);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            String v = m.group(1).equals("NOW_MS") ? Long.toString(System.currentTimeMillis()) : vars.get(m.group(1));
            if (v == null) {
                throw new IllegalArgumentException("unknown variable " + m.group() + " (is @traffic before it?)");
            }
            m.appendReplacement(b, Matcher.quoteReplacement(v));
        }
        m.appendTail(b);
        return b.toString();
    }

    private void runRow(PrintStream out, String name, String argLine, String regex, boolean must, boolean refused) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream capture = new PrintStream(buf, true, StandardCharsets.UTF_8);
        PrintStream err = System.err;
        System.setOut(capture);
        System.setErr(capture);
        long t0 = System.nanoTime();
        try {
            MQAdminStartup.main0(argLine.split("\\s+"), null);
        } catch (Throwable t) {
            t.printStackTrace(capture);
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
        String output = buf.toString(StandardCharsets.UTF_8);
        boolean failed = output.contains("Exception") || output.contains("not supported");
        boolean ok = failed == refused && Pattern.compile(regex, Pattern.DOTALL | Pattern.MULTILINE).matcher(output).find();
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        String verdict = ok ? "PASS" : (must ? "FAIL" : "later");
        out.printf("%-5s %-24s %5d ms  mqadmin %s%n", verdict, name, ms, argLine);
        if (!ok) {
            if (must) {
                mustFailures++;
            }
            out.println(indent(output, must ? 40 : 6));
        }
        report.add("| " + name + " | " + (ok ? "works" : must ? "FAILS" : "not yet") + " | output matches `"
            + regex.replace("|", "\\|") + "` |");
    }

    private static String indent(String s, int maxLines) {
        StringBuilder b = new StringBuilder();
        String[] lines = s.split("\n");
        for (int i = 0; i < lines.length && i < maxLines; i++) {
            b.append("      | ").append(lines[i]).append('\n');
        }
        if (lines.length > maxLines) {
            b.append("      | ... ").append(lines.length - maxLines).append(" more lines\n");
        }
        return b.toString();
    }

    /** Messages with keys in, all consumed by ${GROUP}, which stays online. */
    private void traffic() throws Exception {
        String ns = vars.get("NS");
        String topic = vars.get("TOPIC");
        // with message traces (RMQ_SYS_TRACE_TOPIC) for queryMsgTraceById:
        // a producer that lives on sends them (mqadmin sendMessage -m true
        // shuts its trace producer down before the batch goes out)
        producer = new DefaultMQProducer("MQA_P_" + vars.get("GROUP"), true, null);
        producer.setNamesrvAddr(ns);
        producer.start();
        String keyPrefix = vars.get("KEY").substring(0, vars.get("KEY").length() - 1);
        for (int i = 0; i < MESSAGES; i++) {
            Message m = new Message(topic, "TagA", keyPrefix + i, ("mqadmin body " + i).getBytes(StandardCharsets.UTF_8));
            SendResult r = producer.send(m);
            if (i == 3) {
                vars.put("MSGID", r.getMsgId());
                vars.put("OFFSET_MSGID", r.getOffsetMsgId());
            }
        }
        // A producer heartbeats every 30 s; one now registers it with the
        // broker it just learnt of (producerConnection asks for it).
        producer.getDefaultMQProducerImpl().getmQClientFactory().sendHeartbeatToAllBrokerWithLock();
        AtomicInteger consumed = new AtomicInteger();
        consumer = new DefaultMQPushConsumer(vars.get("GROUP"));
        consumer.setNamesrvAddr(ns);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            consumed.addAndGet(msgs.size());
            for (var m : msgs) {
                received.computeIfAbsent(new String(m.getBody(), StandardCharsets.UTF_8), k -> new AtomicInteger()).incrementAndGet();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        long deadline = System.currentTimeMillis() + 60_000;
        while (consumed.get() < MESSAGES && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        if (consumed.get() < MESSAGES) {
            throw new IllegalStateException("consumed " + consumed.get() + " of " + MESSAGES + " in 60 s");
        }
        // The consumer commits its offsets every 5 s; persist now so that
        // progress commands see them.
        consumer.getDefaultMQPushConsumerImpl().persistConsumerOffset();
        System.out.printf("traffic: %d messages sent with keys and consumed by %s%n", MESSAGES, vars.get("GROUP"));
    }

    /**
     * After a resetOffsetByTime row to the first message: ${GROUP}'s consumer,
     * online all along, receives every @traffic message again (60 s at most).
     * Reported as row "reconsumed", a must.
     */
    private void reconsumed(PrintStream out) throws InterruptedException {
        if (consumer == null) {
            throw new IllegalStateException("@reconsumed needs @traffic before it");
        }
        long t0 = System.nanoTime();
        long deadline = System.currentTimeMillis() + 60_000;
        int twice;
        while (true) {
            twice = 0;
            for (int i = 0; i < MESSAGES; i++) {
                AtomicInteger n = received.get("mqadmin body " + i);
                if (n != null && n.get() >= 2) {
                    twice++;
                }
            }
            if (twice == MESSAGES || System.currentTimeMillis() > deadline) {
                break;
            }
            Thread.sleep(50);
        }
        boolean ok = twice == MESSAGES;
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        out.printf("%-5s %-24s %5d ms  online consumer %s received %d of %d messages again after the reset%n",
            ok ? "PASS" : "FAIL", "reconsumed", ms, vars.get("GROUP"), twice, MESSAGES);
        if (!ok) {
            mustFailures++;
        }
        report.add("| reconsumed | " + (ok ? "works" : "FAILS") + " | the online consumer of ${GROUP} receives all "
            + MESSAGES + " messages again after resetOffsetByTime |");
    }

    /**
     * Sends to ${TOPIC} from a thread (with a producer of its own client
     * instance) until stop(), then waits (60 s at most) until 20 messages
     * went out and the broker shows them both in its 10-second putTps and
     * in the topic's minute window (sampled every 10 s).
     */
    private void stream() throws Exception {
        if (producer == null) {
            throw new IllegalStateException("@stream needs @traffic before it");
        }
        String topic = vars.get("TOPIC");
        streamProducer = new DefaultMQProducer("MQA_S_" + vars.get("GROUP"));
        streamProducer.setNamesrvAddr(vars.get("NS"));
        streamProducer.setInstanceName("mqa-stream-" + System.nanoTime());
        streamProducer.start();
        DefaultMQProducer producer = streamProducer;
        streaming = true;
        stream = new Thread(() -> {
            for (int i = 0; streaming; i++) {
                try {
                    producer.send(new Message(topic, "TagS", ("mqadmin stream " + i).getBytes(StandardCharsets.UTF_8)));
                    streamSent.incrementAndGet();
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) {
                    // a row may take the broker's write permission away
                    streamFailed.incrementAndGet();
                    streamError = e.toString();
                }
            }
        }, "mqadmin-stream");
        stream.setDaemon(true);
        stream.start();
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(vars.get("NS"));
        admin.setInstanceName("mqa-stream-" + System.nanoTime());
        admin.start();
        try {
            long deadline = System.currentTimeMillis() + 60_000;
            while (true) {
                var data = admin.viewBrokerStatsData(vars.get("BROKER"), "TOPIC_PUT_NUMS", topic);
                double tps = data.getStatsMinute().getTps();
                String putTps = admin.fetchBrokerRuntimeStats(vars.get("BROKER")).getTable().get("putTps");
                String tps10s = putTps == null ? "" : putTps.split(" ", -1)[0];
                if (streamSent.get() >= 20 && tps > 0 && !tps10s.isEmpty() && Double.parseDouble(tps10s) > 0) {
                    System.out.printf("stream: sending to %s (%d sent, %d failed), broker reports %.2f TPS over the last minute, putTps %s%n",
                        topic, streamSent.get(), streamFailed.get(), tps, putTps);
                    return;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(String.format("after 60 s: %d sent (%d failed: %s), minute TPS of %s %.2f, putTps %s",
                        streamSent.get(), streamFailed.get(), streamError, topic, tps, putTps));
                }
                Thread.sleep(200);
            }
        } finally {
            admin.shutdown();
        }
    }

    private void stop() {
        streaming = false;
        if (stream != null) {
            stream.interrupt();
            try {
                stream.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            System.out.printf("stream: %d sent, %d failed %s%n", streamSent.get(), streamFailed.get(), streamError);
        }
        if (streamProducer != null) {
            streamProducer.shutdown();
        }
        if (consumer != null) {
            consumer.shutdown();
        }
        if (producer != null) {
            producer.shutdown();
        }
    }
}
