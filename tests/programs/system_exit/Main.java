/**
 * System.exit(7) called from a nested call five frames below main, while a shutdown hook of the
 * program's own prints a line. Nothing after the exit call runs: not the rest of level5, not the
 * finally block of level2.
 *
 * Counts the recorder tests rely on: level1..level5 start once each on the main thread and none
 * of them ends (normally or by an exception).
 */
public class Main {
    static void level1(int code) {
        System.out.println("level1");
        level2(code);
        System.out.println("level1: not reached");
    }

    static void level2(int code) {
        System.out.println("level2");
        try {
            level3(code);
        } finally {
            System.out.println("level2 finally: not reached");
        }
    }

    static void level3(int code) {
        System.out.println("level3");
        level4(code);
    }

    static void level4(int code) {
        System.out.println("level4");
        level5(code);
    }

    static void level5(int code) {
        System.out.println("level5: exiting with " + code);
        System.out.flush();
        System.exit(code);
        System.out.println("level5: not reached");
    }

    public static void main(String[] args) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("shutdown hook ran"), "program-hook"));
        level1(7);
        System.out.println("main: not reached");
    }
}
