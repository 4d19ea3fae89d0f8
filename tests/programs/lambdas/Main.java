import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.IntBinaryOperator;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Lambdas (capturing and not), every kind of method reference, and streams, including a
 * parallel one that runs on the common fork-join pool.
 *
 * Counts the recorder tests rely on: square() is called exactly 11 times: once through
 * sq.apply(7) and 10 times through Main::square in a sequential stream over 1..10.
 */
public class Main {
    static int square(int x) {
        return x * x;
    }

    final String prefix;

    Main(String prefix) {
        this.prefix = prefix;
    }

    String decorate(String s) {
        return prefix + s;
    }

    public static void main(String[] args) {
        Runnable hello = () -> System.out.println("runnable ran");
        hello.run();

        int base = 100;
        IntBinaryOperator addBase = (a, b) -> a + b + base;
        System.out.println("capturing lambda: " + addBase.applyAsInt(1, 2));

        Function<Integer, Integer> sq = Main::square;                 // static method reference
        Main m = new Main("> ");
        Function<String, String> bound = m::decorate;                 // bound instance reference
        Function<String, Integer> unbound = String::length;           // unbound instance reference
        Function<String, Main> ctor = Main::new;                      // constructor reference
        Function<Integer, int[]> array = int[]::new;                  // array constructor reference
        BiFunction<String, String, Boolean> eq = String::equalsIgnoreCase;
        Supplier<List<String>> listMaker = () -> Arrays.asList("c", "a", "b");
        UnaryOperator<String> twice = s -> s + s;
        System.out.println(sq.apply(7) + " " + bound.apply("x") + " " + unbound.apply("four")
                + " " + ctor.apply("#").decorate("y") + " " + array.apply(3).length
                + " " + eq.apply("AbC", "aBc") + " " + listMaker.get() + " " + twice.andThen(String::toUpperCase).apply("ab"));

        int sumOfSquares = IntStream.rangeClosed(1, 10).map(Main::square).sum();
        System.out.println("sum of squares 1..10 = " + sumOfSquares);

        List<String> words = List.of("stream", "lambda", "switch", "record", "finally", "static", "thread", "loader");
        Map<Character, List<String>> byInitial = words.stream()
                .filter(w -> w.length() > 5)
                .sorted()
                .collect(Collectors.groupingBy(w -> w.charAt(0), TreeMap::new, Collectors.toList()));
        System.out.println("grouped: " + byInitial);
        String joined = words.stream().map(String::toUpperCase).limit(3).collect(Collectors.joining(","));
        System.out.println("joined: " + joined);
        long parallelSum = IntStream.range(0, 100_000).parallel().mapToLong(i -> (long) i * 3).sum();
        System.out.println("parallel sum = " + parallelSum);
        Function<Integer, Function<Integer, Integer>> curried = a -> b -> a * b;
        System.out.println("curried: " + curried.apply(6).apply(7));
    }
}
