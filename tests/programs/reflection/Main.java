import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * Reflection: Method.invoke on static and instance methods, Constructor.newInstance, fields,
 * a reflectively invoked method that throws (InvocationTargetException), and enough calls of one
 * method that the JDK switches from its native accessor to a generated one (JDK 17 generates
 * bytecode for it after 15 calls; JDK 18+ uses method handles).
 *
 * Counts the recorder tests rely on: Target.compute(int) runs 20 times, Target(String) 3 times,
 * Target.fail() once (and leaves by an exception).
 */
public class Main {
    public static final class Target {
        private final String name;
        public int counter;

        public Target(String name) {
            this.name = name;
        }

        public static int compute(int x) {
            return x * 3 + 1;
        }

        public String greet(String who) {
            return name + " greets " + who;
        }

        public void fail() {
            throw new IllegalStateException("failed on purpose in " + name);
        }

        private String secret() {
            return "secret of " + name;
        }
    }

    public static void main(String[] args) throws Exception {
        Class<?> cls = Class.forName("Main$Target");
        Method compute = cls.getMethod("compute", int.class);
        int total = 0;
        for (int i = 0; i < 20; i++) {
            total += (Integer) compute.invoke(null, i);
        }
        System.out.println("sum of compute(0..19) via invoke = " + total);

        Constructor<?> ctor = cls.getConstructor(String.class);
        Object[] targets = new Object[3];
        for (int i = 0; i < targets.length; i++) {
            targets[i] = ctor.newInstance("t" + i);
        }
        Method greet = cls.getMethod("greet", String.class);
        for (Object t : targets) {
            System.out.println(greet.invoke(t, "you"));
        }

        Field counter = cls.getField("counter");
        counter.setInt(targets[1], 41);
        counter.setInt(targets[1], counter.getInt(targets[1]) + 1);
        System.out.println("counter of t1 = " + ((Target) targets[1]).counter);

        Method secret = cls.getDeclaredMethod("secret");
        secret.setAccessible(true);
        System.out.println(secret.invoke(targets[2]));

        try {
            cls.getMethod("fail").invoke(targets[0]);
        } catch (InvocationTargetException e) {
            System.out.println("invoke threw " + e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
        }

        String[] names = Arrays.stream(cls.getDeclaredMethods())
                .map(Method::getName).sorted().toArray(String[]::new);
        System.out.println("declared methods: " + String.join(",", names));
        Object array = java.lang.reflect.Array.newInstance(int.class, 4);
        java.lang.reflect.Array.setInt(array, 2, 9);
        System.out.println("array: " + Arrays.toString((int[]) array));
    }
}
