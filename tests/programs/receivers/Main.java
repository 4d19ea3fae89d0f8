/**
 * Receivers of three kinds at one call site: of the called method's own class (Base), of a class
 * that inherits the method (Sub), and of one that overrides part of it (Other). In order: Base,
 * Sub, Other, Sub, Base, so the site in {@link #call} sees 3 classes and 4 changes of class, and
 * so does the call of v() in Base.w.
 */
public class Main {
    static class Base {
        int v() {
            return 1;
        }

        int w() {
            return v() + 10;
        }
    }

    static class Sub extends Base {
    }

    static class Other extends Base {
        @Override
        int v() {
            return 2;
        }
    }

    static int call(Base x) {
        return x.w();
    }

    public static void main(String[] args) {
        Base[] all = {new Base(), new Sub(), new Other(), new Sub(), new Base()};
        int n = 0;
        for (Base x : all) {
            n += call(x);
        }
        System.out.println(n);
    }
}
