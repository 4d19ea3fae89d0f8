/**
 * Every kind of switch javac emits: tableswitch (dense int cases), lookupswitch (sparse int
 * cases), switch on strings (hashCode lookupswitch then equals), switch on an enum (through the
 * synthetic switch-map class), and Java 14+ switch expressions with arrows and yield.
 *
 * Counts the recorder tests rely on: dense() is called 8 times, sparse() 6 times.
 */
public class Main {
    enum Color { RED, GREEN, BLUE, YELLOW }

    static String dense(int i) {
        switch (i) {
            case 0: return "zero";
            case 1: return "one";
            case 2: return "two";
            case 3: return "three";
            case 4:
            case 5: return "four-or-five";
            default: return "many";
        }
    }

    static int sparse(int i) {
        int result;
        switch (i) {
            case -5: result = 1; break;
            case 100: result = 2; break;
            case 10_000: result = 3; break;
            case 1_000_000: result = 4; // fall through
            case 1_000_001: result = 5; break;
            default: result = 0;
        }
        return result;
    }

    static int onString(String s) {
        switch (s) {
            case "alpha": return 1;
            case "beta": return 2;
            // "Aa" and "BB" have the same hashCode: the equals chain decides.
            case "Aa": return 3;
            case "BB": return 4;
            default: return -1;
        }
    }

    static String onEnum(Color c) {
        switch (c) {
            case RED: return "warm";
            case YELLOW: return "bright";
            default: return "cool";
        }
    }

    static String expression(Color c) {
        return switch (c) {
            case RED, YELLOW -> "warm-ish";
            case GREEN -> {
                String s = "gr";
                yield s + "een";
            }
            case BLUE -> "blue";
        };
    }

    static int stringExpression(String s) {
        return switch (s) {
            case "one" -> 1;
            case "two", "deux" -> 2;
            default -> {
                if (s.isEmpty()) {
                    yield 0;
                }
                yield s.length() * 100;
            }
        };
    }

    public static void main(String[] args) {
        StringBuilder out = new StringBuilder();
        for (int i = -1; i < 7; i++) {
            out.append(dense(i)).append(' ');
        }
        System.out.println("dense: " + out.toString().trim());
        int[] keys = {-5, 100, 10_000, 1_000_000, 1_000_001, 7};
        out.setLength(0);
        for (int k : keys) {
            out.append(sparse(k)).append(' ');
        }
        System.out.println("sparse: " + out.toString().trim());
        out.setLength(0);
        for (String s : new String[] {"alpha", "beta", "Aa", "BB", "gamma"}) {
            out.append(onString(s)).append(' ');
        }
        System.out.println("string: " + out.toString().trim());
        out.setLength(0);
        for (Color c : Color.values()) {
            out.append(c).append('=').append(onEnum(c)).append('/').append(expression(c)).append(' ');
        }
        System.out.println("enum: " + out.toString().trim());
        out.setLength(0);
        for (String s : new String[] {"one", "two", "deux", "", "three"}) {
            out.append(stringExpression(s)).append(' ');
        }
        System.out.println("string expression: " + out.toString().trim());
    }
}
