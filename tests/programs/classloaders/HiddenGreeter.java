/** Defined a second time, as a hidden class, from its own bytes. */
public class HiddenGreeter implements Greeter {
    @Override
    public String greet(String who) {
        return "hidden greeting to " + who;
    }
}
