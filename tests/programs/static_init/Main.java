/**
 * Static initializers: initialization order (a class initializing another from its own
 * initializer), an interface constant, a lazy holder, and an initializer that throws, which the
 * program catches as ExceptionInInitializerError and then as NoClassDefFoundError on the second
 * use.
 *
 * Counts the recorder tests rely on: Broken.<clinit> starts once and leaves by an exception, as
 * does Broken.explode(); Outer.<clinit> and Inner.<clinit> run once each.
 */
public class Main {
    static final StringBuilder order = new StringBuilder();

    static class Inner {
        static final int VALUE;

        static {
            order.append("Inner ");
            VALUE = 7;
        }
    }

    static class Outer {
        static final int DOUBLED;

        static {
            order.append("Outer-begin ");
            DOUBLED = Inner.VALUE * 2;
            order.append("Outer-end ");
        }
    }

    interface Constants {
        String NAME = "constant";               // a compile-time constant: no initialization
        int[] TABLE = Main.table("Constants");  // needs the interface's initializer
    }

    static class Holder {
        static final String INSTANCE;

        static {
            order.append("Holder ");
            INSTANCE = "lazy instance";
        }
    }

    static class Broken {
        static final int VALUE = explode();

        static int explode() {
            order.append("Broken ");
            throw new IllegalStateException("static initializer failed");
        }
    }

    static int[] table(String who) {
        order.append(who).append(' ');
        return new int[] {1, 2, 3};
    }

    public static void main(String[] args) {
        System.out.println("Outer.DOUBLED = " + Outer.DOUBLED);
        System.out.println("Constants.NAME = " + Constants.NAME + ", order so far: " + order.toString().trim());
        System.out.println("Constants.TABLE.length = " + Constants.TABLE.length);
        try {
            System.out.println("Broken.VALUE = " + Broken.VALUE);
        } catch (ExceptionInInitializerError e) {
            System.out.println("first use: " + e.getClass().getSimpleName() + " caused by "
                    + e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
        }
        try {
            System.out.println("Broken.VALUE = " + Broken.VALUE);
        } catch (NoClassDefFoundError e) {
            System.out.println("second use: " + e.getClass().getSimpleName());
        }
        System.out.println("Holder.INSTANCE = " + Holder.INSTANCE);
        System.out.println("order: " + order.toString().trim());
    }
}
