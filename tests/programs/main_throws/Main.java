/**
 * main ends with an uncaught exception thrown two calls below it: the JVM prints the stack trace
 * and exits with status 1.
 *
 * Counts the recorder tests rely on: parse() and validate() each start once and leave by an
 * exception, as does main.
 */
public class Main {
    static int validate(String text) {
        if (text.isEmpty()) {
            throw new IllegalArgumentException("bad input: empty string");
        }
        return text.length();
    }

    static int parse(String text) {
        return validate(text.trim());
    }

    public static void main(String[] args) {
        System.out.println("before: " + parse(" ok "));
        System.out.println("after: " + parse("   "));
    }
}
