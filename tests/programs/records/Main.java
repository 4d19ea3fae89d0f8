import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Records: canonical and compact constructors, the generated accessors, equals, hashCode and
 * toString (which javac implements with invokedynamic and java.lang.runtime.ObjectMethods),
 * static members, nested records, records implementing interfaces.
 *
 * Counts the recorder tests rely on: the compact constructor Range(int, int) runs 4 times and
 * throws once.
 */
public class Main {
    interface Shape {
        double area();
    }

    record Point(int x, int y) {
        static final Point ORIGIN = new Point(0, 0);

        Point translate(int dx, int dy) {
            return new Point(x + dx, y + dy);
        }
    }

    record Range(int lo, int hi) {
        Range {
            if (lo > hi) {
                throw new IllegalArgumentException("lo " + lo + " > hi " + hi);
            }
        }

        int length() {
            return hi - lo;
        }
    }

    record Rect(Point corner, int width, int height) implements Shape {
        public double area() {
            return (double) width * height;
        }
    }

    record Named<T>(String name, T value) {
        @Override
        public String name() {
            return name.toUpperCase();
        }
    }

    public static void main(String[] args) {
        Point p = new Point(3, 4);
        Point q = p.translate(-3, -4);
        System.out.println(p + " " + q + " origin=" + q.equals(Point.ORIGIN) + " same=" + (q == Point.ORIGIN));
        System.out.println("hash equal: " + (q.hashCode() == Point.ORIGIN.hashCode()) + " x=" + p.x() + " y=" + p.y());

        int[][] bounds = {{1, 5}, {2, 2}, {7, 3}, {-4, 4}};
        for (int[] b : bounds) {
            try {
                Range r = new Range(b[0], b[1]);
                System.out.println(r + " length " + r.length());
            } catch (IllegalArgumentException e) {
                System.out.println("rejected: " + e.getMessage());
            }
        }

        List<Shape> shapes = new ArrayList<>();
        shapes.add(new Rect(new Point(0, 0), 2, 3));
        shapes.add(new Rect(new Point(1, 1), 5, 1));
        shapes.add(new Rect(new Point(0, 0), 2, 3));
        shapes.sort(Comparator.comparingDouble(Shape::area));
        System.out.println(shapes);
        Set<Shape> unique = new HashSet<>(shapes);
        System.out.println("unique shapes: " + unique.size());

        Named<Point> named = new Named<>("corner", p);
        System.out.println(named + " name()=" + named.name());
        System.out.println("record class: " + Point.class.isRecord() + " components: "
                + Point.class.getRecordComponents().length);
    }
}
