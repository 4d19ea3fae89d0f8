/** The interface both copies of Plugin implement; it is loaded once, by the application loader. */
public interface Greeter {
    String greet(String who);
}
