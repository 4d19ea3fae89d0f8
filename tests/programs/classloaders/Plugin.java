/**
 * Defined twice from the same bytes, by two different loaders: each copy has its own static state.
 */
public class Plugin implements Greeter {
    static int greetings;

    static {
        System.out.println("  Plugin initialized in " + Plugin.class.getClassLoader().getName());
    }

    @Override
    public String greet(String who) {
        greetings++;
        return "greeting #" + greetings + " to " + who + " from " + getClass().getClassLoader().getName();
    }
}
