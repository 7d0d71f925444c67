import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

// Prints the signature Java's AclClientRPCHook gives the requests the Go
// test TestSignatureMatchesJava builds: one line per case. Run as
//   java -cp '<rocketmq-5.2.0 jars>/*' SignVector.java
public class SignVector {
    static RemotingCommand request() {
        RemotingCommand req = RemotingCommand.createRequestCommand(10, null);
        req.addExtField("topic", "TopicTest");
        req.addExtField("queueId", "3");
        req.addExtField("producerGroup", "PG");
        req.addExtField("properties", "KEYS\u0001k1\u0002UNIQ_KEY\u0001AB\u0002");
        req.addExtField("\uE000z", "private-use");
        req.addExtField("\uD83D\uDE00a", "emoji");
        req.addExtField("z\u00e9", "accent");
        req.setBody("hello body".getBytes(StandardCharsets.UTF_8));
        return req;
    }

    public static void main(String[] args) {
        RemotingCommand a = request();
        new AclClientRPCHook(new SessionCredentials("rocketmq2", "12345678")).doBeforeRequest("", a);
        System.out.println(a.getExtFields().get("Signature"));
        RemotingCommand b = request();
        new AclClientRPCHook(new SessionCredentials("rocketmq2", "12345678", "token-1")).doBeforeRequest("", b);
        System.out.println(b.getExtFields().get("Signature"));
        RemotingCommand c = RemotingCommand.createRequestCommand(34, null);
        new AclClientRPCHook(new SessionCredentials("ak", "sk")).doBeforeRequest("", c);
        System.out.println(c.getExtFields().get("Signature"));
    }
}
