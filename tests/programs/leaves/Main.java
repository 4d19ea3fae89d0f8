/**
 * Leaf methods (jbgui.instr.LeafMethods: one probe records their start and end at once) beside
 * methods that are not leaves. Cell.get and Cell.set are leaves whose receivers alternate between
 * Cell (the method's own class) and Tagged (which inherits them); square is a static leaf;
 * positive is a leaf at method level only (its branch makes blocks); ratio divides, so it may
 * throw and is no leaf, and its one call ends in an ArithmeticException. 200,000 rounds of
 * leaf calls fill the thread's buffer many times over, so leaves hand buffers over too.
 */
public class Main {
    static class Cell {
        int value;

        Cell(int value) {
            this.value = value;
        }

        int get() {
            return value;
        }

        void set(int v) {
            value = v;
        }

        boolean positive() {
            return value > 0;
        }
    }

    static class Tagged extends Cell {
        Tagged(int value) {
            super(value);
        }
    }

    static int square(int x) {
        return x * x;
    }

    static int ratio(int a, int b) {
        return a / b;
    }

    public static void main(String[] args) {
        Cell[] cells = {new Cell(1), new Tagged(2), new Cell(3), new Tagged(4)};
        long sum = 0;
        for (int i = 0; i < 200_000; i++) {
            Cell c = cells[i & 3];
            c.set(c.get() + 1);
            sum += square(i & 7);
            if (c.positive()) {
                sum++;
            }
        }
        int caught = 0;
        try {
            ratio(1, 0);
        } catch (ArithmeticException e) {
            caught = 1;
        }
        System.out.println(sum + " " + caught + " " + cells[0].get());
    }
}
