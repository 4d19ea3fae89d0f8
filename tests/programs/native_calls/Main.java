import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * Native methods and reflection between application frames, for the replay oracle
 * (tests/oracle): System.arraycopy (normal, an IndexOutOfBoundsException caught two frames up, an
 * ArrayStoreException caught in the calling frame), Object.hashCode and Object.clone reached
 * through super calls (a CloneNotSupportedException thrown by the native clone), Thread.sleep
 * (normal and interrupted), Class.forName of a missing class, of a class whose static
 * initializer calls application code, and of one whose initializer throws; Method.invoke of
 * application code that throws and catches inside, that throws through the invocation
 * (InvocationTargetException; once where the caller's handler would also catch the target's own
 * exception, which the debugger interface then names as its catch location), and
 * Constructor.newInstance of a throwing constructor.
 */
public class Main implements Cloneable {
    static final StringBuilder log = new StringBuilder();

    final int id;

    Main(int id) {
        this.id = id;
    }

    static int[] copy(int[] from, int length) {
        int[] to = new int[3];
        System.arraycopy(from, 0, to, 0, length);
        return to;
    }

    static int copyOuter(int[] from, int length) {
        return copy(from, length).length;
    }

    static String storeMismatch() {
        Object[] to = new Integer[2];
        try {
            System.arraycopy(new Object[] {"s", "t"}, 0, to, 0, 2);
            return "stored";
        } catch (ArrayStoreException e) {
            return "ArrayStoreException";
        }
    }

    @Override
    public int hashCode() {
        return super.hashCode() == 0 ? 1 : 2;   // the identity hash is never 0
    }

    Main copyOf() throws CloneNotSupportedException {
        return (Main) super.clone();
    }

    static final class NotCloneable {
        Object copyOf() throws CloneNotSupportedException {
            return super.clone();
        }
    }

    static String sleep(boolean interrupted) {
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        try {
            Thread.sleep(1);
            return "slept";
        } catch (InterruptedException e) {
            return "interrupted";
        }
    }

    static String load(String name) {
        try {
            return Class.forName(name).getSimpleName();
        } catch (ClassNotFoundException e) {
            return "ClassNotFoundException";
        } catch (ExceptionInInitializerError e) {
            return "ExceptionInInitializerError";
        }
    }

    static int helper(int x) {
        if (x == 2) {
            throw new IllegalStateException("helper " + x);
        }
        return x * 10;
    }

    static final class Loaded {
        static final int VALUE;

        static {
            int v;
            try {
                v = helper(2);
            } catch (IllegalStateException e) {
                v = helper(3);
            }
            VALUE = v;
        }
    }

    static final class FailingInit {
        static final int VALUE = helper(2);
    }

    public static final class Target {
        public final int value;

        public Target(int value) {
            if (value < 0) {
                throw new IllegalArgumentException("negative " + value);
            }
            this.value = value;
        }

        public static int safe(int x) {
            try {
                return helper(x);
            } catch (IllegalStateException e) {
                return -1;
            }
        }

        public static int unsafe(int x) {
            return helper(x) + 1;
        }
    }

    static String invoke(Method m, int x) throws IllegalAccessException {
        try {
            return String.valueOf(m.invoke(null, x));
        } catch (InvocationTargetException e) {
            return "InvocationTargetException(" + e.getCause().getMessage() + ")";
        }
    }

    static String invokeCatchingAll(Method m, int x) {
        try {
            return String.valueOf(m.invoke(null, x));
        } catch (RuntimeException | ReflectiveOperationException e) {
            return e.getClass().getSimpleName();
        }
    }

    static String construct(int x) throws ReflectiveOperationException {
        Constructor<Target> c = Target.class.getConstructor(int.class);
        try {
            return "Target " + c.newInstance(x).value;
        } catch (InvocationTargetException e) {
            return "InvocationTargetException(" + e.getCause().getMessage() + ")";
        }
    }

    public static void main(String[] args) throws Exception {
        int[] source = {1, 2, 3, 4};
        System.out.println("copy: " + copy(source, 3)[2]);
        try {
            copyOuter(source, 4);
        } catch (IndexOutOfBoundsException e) {
            System.out.println("copyOuter threw " + e.getClass().getSimpleName());
        }
        System.out.println("storeMismatch: " + storeMismatch());
        Main m = new Main(4);
        System.out.println("hashCode: " + m.hashCode() + ", identity hash equal: " + (System.identityHashCode(m) == System.identityHashCode(m)));
        System.out.println("clone: " + m.copyOf().id);
        try {
            new NotCloneable().copyOf();
        } catch (CloneNotSupportedException e) {
            System.out.println("clone threw " + e.getClass().getSimpleName());
        }
        System.out.println("sleep: " + sleep(false) + " " + sleep(true));
        System.out.println("load: " + load("Main$Missing") + " " + load("Main$Loaded") + " " + Loaded.VALUE
                + " " + load("Main$FailingInit"));
        Method safe = Target.class.getMethod("safe", int.class);
        Method unsafe = Target.class.getMethod("unsafe", int.class);
        System.out.println("invoke: " + invoke(safe, 1) + " " + invoke(safe, 2) + " " + invoke(unsafe, 1) + " " + invoke(unsafe, 2)
                + " " + invokeCatchingAll(unsafe, 2));
        System.out.println("construct: " + construct(5) + " " + construct(-5));
    }
}
