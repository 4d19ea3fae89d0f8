/**
 * One interface call site with a known sequence of receiver classes, for the polymorphism metrics:
 * Triangle, Square, Triangle, Triangle, Square, Pentagon, Pentagon is 3 receiver classes and 4
 * changes of class. The call in {@link #once} always sees Square: monomorphic.
 */
public class Main {
    interface Shape {
        int sides();
    }

    static final class Triangle implements Shape {
        public int sides() { return 3; }
    }

    static final class Square implements Shape {
        public int sides() { return 4; }
    }

    static final class Pentagon implements Shape {
        public int sides() { return 5; }
    }

    static int total(Shape[] shapes) {
        int n = 0;
        for (Shape shape : shapes) {
            n += shape.sides();
        }
        return n;
    }

    static int once(Shape shape) {
        return shape.sides();
    }

    public static void main(String[] args) {
        Shape t = new Triangle(), q = new Square(), p = new Pentagon();
        int n = total(new Shape[] {t, q, t, t, q, p, p}) + once(q) + once(q);
        System.out.println(n);
    }
}
