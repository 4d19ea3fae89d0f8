/** Hello world: the smallest program, and the startup benchmark. */
public class Main {
    public static void main(String[] args) {
        System.out.println("Hello, world!");
    }
}
