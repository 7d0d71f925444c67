import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;

// The Java side of TestAuthJavaClientInterop: a producer and a push
// consumer signing with AclClientRPCHook (Java's ACL client hook, what
// RocketMQ 5.3 clients use against authenticationEnabled brokers) work;
// a producer with a wrong secret gets the broker's NO_PERMISSION (16) with
// "check signature failed.".
//
//   java -cp '<rocketmq 5.x jars>/*' AclClientCheck.java NAMESRV TOPIC AK SK
//
// Exits 0 when everything holds; prints what it saw.
public class AclClientCheck {
    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable e) {
            e.printStackTrace();
            System.out.println("FAIL " + e);
            System.exit(1);
        }
        System.out.println("PASS");
        System.exit(0);
    }

    static void run(String[] args) throws Exception {
        String ns = args[0], topic = args[1], ak = args[2], sk = args[3];
        int n = 8;

        DefaultMQProducer p = new DefaultMQProducer("acl_pg", new AclClientRPCHook(new SessionCredentials(ak, sk)));
        p.setNamesrvAddr(ns);
        p.setInstanceName("acl_p");
        p.setVipChannelEnabled(false);
        p.setSendMsgTimeout(20_000); // a loaded test machine
        p.start();
        for (int i = 0; i < n; i++) {
            SendResult r = p.send(new Message(topic, "T", ("acl-" + i).getBytes(StandardCharsets.UTF_8)));
            if (r.getSendStatus() != SendStatus.SEND_OK) {
                throw new IllegalStateException("send " + i + ": " + r);
            }
        }
        p.shutdown();
        System.out.println("signed producer: " + n + " SEND_OK");

        DefaultMQPushConsumer c = new DefaultMQPushConsumer("acl_cg", new AclClientRPCHook(new SessionCredentials(ak, sk)),
            new AllocateMessageQueueAveragely());
        c.setNamesrvAddr(ns);
        c.setInstanceName("acl_c");
        c.setVipChannelEnabled(false);
        c.setConsumeFromWhere(org.apache.rocketmq.common.consumer.ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        AtomicInteger received = new AtomicInteger();
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            received.addAndGet(msgs.size());
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        long deadline = System.currentTimeMillis() + 60_000;
        while (received.get() < n && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        c.shutdown();
        int got = received.get();
        System.out.println("signed consumer: received " + got);
        if (got < n) {
            throw new IllegalStateException("consumer received " + got + " of " + n);
        }

        DefaultMQProducer bad = new DefaultMQProducer("acl_bad_pg", new AclClientRPCHook(new SessionCredentials(ak, "wrong-secret")));
        bad.setNamesrvAddr(ns);
        bad.setInstanceName("acl_bad");
        bad.setVipChannelEnabled(false);
        bad.setSendMsgTimeout(20_000);
        bad.setRetryTimesWhenSendFailed(0);
        bad.start();
        try {
            SendResult r = bad.send(new Message(topic, "T", "x".getBytes(StandardCharsets.UTF_8)));
            throw new IllegalStateException("send with a wrong secret passed: " + r);
        } catch (MQClientException e) {
            // The producer wraps the broker's answer once out of retries.
            Throwable cause = e.getCause();
            if (!(cause instanceof MQBrokerException)) {
                throw e;
            }
            MQBrokerException be = (MQBrokerException) cause;
            System.out.println("wrong secret: code " + be.getResponseCode() + " remark " + be.getErrorMessage());
            if (be.getResponseCode() != 16 || !"check signature failed.".equals(be.getErrorMessage())) {
                throw new IllegalStateException("wrong secret refused with " + be.getResponseCode() + " " + be.getErrorMessage());
            }
        } finally {
            bad.shutdown();
        }
    }
}
