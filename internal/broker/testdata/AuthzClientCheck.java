import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
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

// The Java side of TestAuthorizationJavaClient: a NORMAL user's producer
// and push consumer (AclClientRPCHook) work on a topic its ACL allows,
// every request the Java client sends on the way included (heartbeats,
// offsets, consumer lists, pulls); a send to a topic the ACL denies gets
// the broker's NO_PERMISSION (16) with Java's remark.
//
//   java -cp '<rocketmq 5.x jars>/*' AuthzClientCheck.java NAMESRV ALLOWED DENIED GROUP AK SK
//
// Exits 0 when everything holds; prints what it saw.
public class AuthzClientCheck {
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
        String ns = args[0], allowed = args[1], denied = args[2], group = args[3], ak = args[4], sk = args[5];
        int n = 4;

        DefaultMQProducer p = new DefaultMQProducer("authz_pg", new AclClientRPCHook(new SessionCredentials(ak, sk)));
        p.setNamesrvAddr(ns);
        p.setInstanceName("authz_p");
        p.setVipChannelEnabled(false);
        p.setSendMsgTimeout(20_000); // a loaded test machine
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        for (int i = 0; i < n; i++) {
            SendResult r = p.send(new Message(allowed, "T", ("authz-" + i).getBytes(StandardCharsets.UTF_8)));
            if (r.getSendStatus() != SendStatus.SEND_OK) {
                throw new IllegalStateException("send " + i + ": " + r);
            }
        }
        System.out.println("allowed topic: " + n + " SEND_OK");
        try {
            SendResult r = p.send(new Message(denied, "T", "x".getBytes(StandardCharsets.UTF_8)));
            throw new IllegalStateException("send to the denied topic passed: " + r);
        } catch (MQClientException e) {
            Throwable cause = e.getCause();
            if (!(cause instanceof MQBrokerException)) {
                throw e;
            }
            MQBrokerException be = (MQBrokerException) cause;
            System.out.println("denied topic: code " + be.getResponseCode() + " remark " + be.getErrorMessage());
            String want = "User:" + ak + " has no permission to access Topic:" + denied + " from 127.0.0.1, the decision is deny.";
            if (be.getResponseCode() != 16 || !want.equals(be.getErrorMessage())) {
                throw new IllegalStateException("denied topic refused with " + be.getResponseCode() + " " + be.getErrorMessage());
            }
        } finally {
            p.shutdown();
        }

        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group, new AclClientRPCHook(new SessionCredentials(ak, sk)),
            new AllocateMessageQueueAveragely());
        c.setNamesrvAddr(ns);
        c.setInstanceName("authz_c");
        c.setVipChannelEnabled(false);
        c.setConsumeFromWhere(org.apache.rocketmq.common.consumer.ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(allowed, "*");
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
        System.out.println("allowed consumer: received " + got);
        if (got < n) {
            throw new IllegalStateException("consumer received " + got + " of " + n);
        }
    }
}
