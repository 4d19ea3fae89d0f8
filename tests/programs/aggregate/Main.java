import java.util.Arrays;

/**
 * A known call structure for the aggregated views: {@code leaf} is called 3 times from {@code a}
 * and 5 times from {@code b}; {@code fact(6)} recurses 6 calls deep; {@code sortWords} enters the
 * JDK ({@code Arrays.sort}) which calls back into this class through a method reference
 * ({@code compareLengths}, which calls {@code Integer.compare}: JDK under my code under JDK).
 * Prints "{@code 60 720 a,bb,ccc,dddd}".
 */
public class Main {
    static int leaf(int x) {
        return x * 2 + 1;
    }

    static int a() {
        int s = 0;
        for (int i = 0; i < 3; i++) {
            s += leaf(i);
        }
        return s;
    }

    static int b() {
        int s = 0;
        for (int i = 0; i < 5; i++) {
            s += leaf(i);
        }
        return s;
    }

    static int fact(int n) {
        return n <= 1 ? 1 : n * fact(n - 1);
    }

    static int compareLengths(String x, String y) {
        return Integer.compare(x.length(), y.length());
    }

    static String sortWords() {
        String[] words = {"dddd", "a", "ccc", "bb"};
        Arrays.sort(words, Main::compareLengths);
        return String.join(",", words);
    }

    public static void main(String[] args) {
        int sum = a() + b() + 26;
        System.out.println(sum + " " + fact(6) + " " + sortWords());
    }
}
