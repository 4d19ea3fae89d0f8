import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * Lambdas and sequential streams calling application code, for the replay oracle (tests/oracle):
 * method references and lambdas in map/filter/sorted/reduce, an application Comparator and
 * Iterator driven by JDK code, a lambda that throws out of a stream pipeline (caught by main,
 * through the stream's frames), a JDK exception thrown inside a lambda (Integer.parseInt),
 * a JDK exception (NoSuchElementException) thrown by an application iterator's caller, and a
 * FutureTask on the main thread whose callable fails: the JDK catches the exception and
 * future.get() throws an ExecutionException. Everything runs on the main thread.
 */
public class Main {
    static int square(int x) {
        return x * x;
    }

    static boolean even(int x) {
        return x % 2 == 0;
    }

    static int check(int x) {
        if (x == 4) {
            throw new IllegalArgumentException("four");
        }
        return x;
    }

    static int parse(String s) {
        return Integer.parseInt(s);
    }

    static final class ByLength implements Comparator<String> {
        @Override
        public int compare(String a, String b) {
            int byLength = Integer.compare(a.length(), b.length());
            return byLength != 0 ? byLength : a.compareTo(b);
        }
    }

    static final class Countdown implements Iterable<Integer> {
        final int from;

        Countdown(int from) {
            this.from = from;
        }

        @Override
        public Iterator<Integer> iterator() {
            return new Iterator<>() {
                int next = from;

                @Override
                public boolean hasNext() {
                    return next > 0;
                }

                @Override
                public Integer next() {
                    if (next <= 0) {
                        throw new NoSuchElementException("done");
                    }
                    return next--;
                }
            };
        }
    }

    public static void main(String[] args) throws Exception {
        int sum = IntStream.rangeClosed(1, 6).filter(Main::even).map(Main::square).sum();
        System.out.println("sum of even squares 1..6 = " + sum);

        List<String> words = new ArrayList<>(List.of("pear", "fig", "banana", "kiwi", "apple"));
        words.sort(new ByLength());
        System.out.println("by length: " + words);
        String joined = words.stream().map(w -> w.substring(0, 1)).collect(Collectors.joining());
        System.out.println("initials: " + joined);
        Function<Integer, Integer> plusOne = x -> x + 1;
        System.out.println("composed: " + plusOne.andThen(Main::square).apply(3));
        System.out.println("optional: " + Optional.of(5).map(Main::square).filter(Main::even).orElse(-1));

        try {
            Stream.of(1, 2, 3, 4, 5).map(Main::check).forEach(x -> System.out.println("checked " + x));
        } catch (IllegalArgumentException e) {
            System.out.println("stream threw " + e.getMessage());
        }
        try {
            Stream.of("1", "2", "x").mapToInt(s -> parse(s)).sum();
        } catch (NumberFormatException e) {
            System.out.println("parse threw " + e.getClass().getSimpleName());
        }

        int total = 0;
        for (int x : new Countdown(3)) {
            total += x;
        }
        System.out.println("countdown total = " + total);
        Iterator<Integer> it = new Countdown(1).iterator();
        it.next();
        try {
            it.next();
        } catch (NoSuchElementException e) {
            System.out.println("iterator threw " + e.getMessage());
        }

        FutureTask<Integer> task = new FutureTask<>(() -> parse("not a number"));
        task.run();
        try {
            task.get();
        } catch (ExecutionException e) {
            System.out.println("future threw " + e.getCause().getClass().getSimpleName());
        }
        System.out.println("reduce: " + Stream.of(1, 2, 3, 4).reduce(0, (a, b) -> a + square(b)));
    }
}
