// Traffic for interop/exporter/run.sh, run as a single-file Java program with
// the RocketMQ client jars on the class path:
//
//   java -cp 'LIB/*' Traffic.java NAMESRV TOPIC PRODUCER_GROUP CONSUMER_GROUP COUNT
//
// Sends COUNT messages with a producer that stays online, consumes them with
// a push consumer that stays online (the exporter reads producer and
// consumer connections, consumer running info and group offsets), prints
// "READY sent=N consumed=M" once every message was consumed and then stays
// online until it is killed.
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;

public class Traffic {
    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1); // the client's threads would keep the JVM up
        }
    }

    private static void run(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: Traffic NAMESRV TOPIC PRODUCER_GROUP CONSUMER_GROUP COUNT");
            System.exit(2);
        }
        String ns = args[0], topic = args[1], producerGroup = args[2], consumerGroup = args[3];
        int count = Integer.parseInt(args[4]);

        DefaultMQProducer producer = new DefaultMQProducer(producerGroup);
        producer.setNamesrvAddr(ns);
        // A server that just started, on a busy machine, can take seconds
        // to answer (the default budgets are 3 s).
        producer.setSendMsgTimeout(30000);
        producer.setMqClientApiTimeout(30000);
        producer.start();
        int sent = 0;
        for (int i = 0; i < count; i++) {
            Message msg = new Message(topic, "TagA", "key-" + i, ("exporter traffic " + i).getBytes(StandardCharsets.UTF_8));
            SendResult r = sendWithRetry(producer, msg, i);
            if (r.getSendStatus() != SendStatus.SEND_OK) {
                throw new IllegalStateException("send " + i + ": " + r);
            }
            sent++;
        }

        AtomicInteger consumed = new AtomicInteger();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(consumerGroup);
        consumer.setNamesrvAddr(ns);
        consumer.setMqClientApiTimeout(30000);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            consumed.addAndGet(msgs.size());
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (consumed.get() < count) {
            if (System.nanoTime() > deadline) {
                System.err.println("consumed " + consumed.get() + " of " + count + " in 120 s");
                System.exit(1);
            }
            Thread.sleep(100);
        }
        System.out.println("READY sent=" + sent + " consumed=" + consumed.get());
        System.out.flush();
        // Stay online (the exporter reads the live clients) until killed.
        new java.util.concurrent.CountDownLatch(1).await();
    }

    // sendWithRetry sends msg, retrying twice after a client exception
    // (a timeout on a loaded machine).
    private static SendResult sendWithRetry(DefaultMQProducer producer, Message msg, int i) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return producer.send(msg);
            } catch (Exception e) {
                if (attempt == 3) {
                    throw e;
                }
                System.err.println("send " + i + " attempt " + attempt + ": " + e);
            }
        }
    }
}
