package io.rocketd.interop;

import java.util.concurrent.Callable;

/**
 * The entry every check shares: the arguments run.sh passes
 * (NAMESRV_ADDR TOPIC BROKER_ADDR), the VIP-channel switch, running the
 * check, and its exit code (0: passed, 1: failed or threw, 2: usage).
 */
final class CheckMain {
    /** Builds a check from its arguments; the Callable runs it and returns its exit code. */
    interface Factory {
        Callable<Integer> create(String[] args) throws Exception;
    }

    private CheckMain() {
    }

    /**
     * Runs the check factory builds and exits with its code. minArgs is 2 or
     * 3 (the broker address is needed). The VIP channel (listenPort-2) is
     * off unless vip: set before any client object exists, since the
     * client reads the property once.
     */
    static void run(String name, String[] args, int minArgs, boolean vip, Factory factory) {
        if (args.length < minArgs) {
            System.err.println("usage: " + name + " NAMESRV_ADDR TOPIC " + (minArgs > 2 ? "BROKER_ADDR" : "[BROKER_ADDR]"));
            System.exit(2);
        }
        System.setProperty("com.rocketmq.sendMessageWithVIPChannel", Boolean.toString(vip));
        int code;
        try {
            code = factory.create(args).call();
        } catch (Throwable t) {
            t.printStackTrace();
            code = 1;
        }
        System.exit(code);
    }
}
