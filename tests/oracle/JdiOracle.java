import com.sun.jdi.Bootstrap;
import com.sun.jdi.Location;
import com.sun.jdi.Method;
import com.sun.jdi.ReferenceType;
import com.sun.jdi.StackFrame;
import com.sun.jdi.ThreadReference;
import com.sun.jdi.VMDisconnectedException;
import com.sun.jdi.VirtualMachine;
import com.sun.jdi.connect.Connector;
import com.sun.jdi.connect.LaunchingConnector;
import com.sun.jdi.event.BreakpointEvent;
import com.sun.jdi.event.Event;
import com.sun.jdi.event.EventQueue;
import com.sun.jdi.event.EventSet;
import com.sun.jdi.event.ExceptionEvent;
import com.sun.jdi.event.MethodEntryEvent;
import com.sun.jdi.event.MethodExitEvent;
import com.sun.jdi.event.VMDeathEvent;
import com.sun.jdi.event.VMDisconnectEvent;
import com.sun.jdi.event.VMStartEvent;
import com.sun.jdi.request.BreakpointRequest;
import com.sun.jdi.request.EventRequest;
import com.sun.jdi.request.EventRequestManager;
import com.sun.jdi.request.ExceptionRequest;
import com.sun.jdi.request.MethodEntryRequest;
import com.sun.jdi.request.MethodExitRequest;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An independent oracle for jbgui's trace replay: runs a program under the JDK's debugger
 * interface (JDI, module jdk.jdi) and writes the application methods it enters and leaves and
 * every exception that touches application frames to a log file, one event per line.
 *
 * <pre>
 * java -cp DIR JdiOracle --log FILE --cp CLASSPATH --app PREFIX [--app PREFIX …] [--no-exits]
 *      [--vm-option OPT …] -- MAIN_CLASS [ARG …]
 * </pre>
 *
 * The program is launched through the CommandLineLaunch connector of the JDK this class runs on,
 * suspended at start; the requests below are enabled before any of its code runs. Its stdout and
 * stderr are forwarded to ours; the oracle exits with the program's exit status.
 *
 * An application class is one whose dotted name starts with one of the --app prefixes and that is
 * not hidden (hidden classes such as lambda proxies have a '/' in their name). Requests:
 * <ul>
 * <li>MethodEntryRequest and MethodExitRequest per prefix (JDI class filters are ANDed, so one
 *     request per prefix; events one entry produces twice are counted once);</li>
 * <li>one ExceptionRequest for every exception, caught and uncaught;</li>
 * <li>for an exception with a catch location, a one-shot BreakpointRequest at that location
 *     for the throwing thread: its hit tells which frame catches (the handler is the first code
 *     the catching frame runs after the unwinding, so the breakpoint is the thread's next
 *     event). That is exact also when the catching frame is an outer frame of the same method.</li>
 * </ul>
 * All use SUSPEND_EVENT_THREAD, so the thread's stack is read as it is at the event.
 *
 * Log lines, tab-separated; DEPTH is the thread's number of frames (native and hidden frames
 * included) at the event, so the frame of an entry has depth DEPTH until it is popped:
 * <pre>
 * THREAD  TID  NAME                          first event of a thread (its name then)
 * ENTER   TID  DEPTH  APP_DEPTH  METHOD      APP_DEPTH: application frames below this one
 * EXIT    TID  DEPTH  METHOD                 a normal return (see --no-exits)
 * THROW   TID  DEPTH  EXCEPTION_CLASS  THROW_LOCATION  CATCH_LOCATION|none  APP_FRAMES
 * CATCH   TID  DEPTH  LOCATION               the catching frame reached its handler
 * END     EXIT_CODE
 * </pre>
 * METHOD is {@code dotted.Class.name(descriptor)return}; a LOCATION is {@code METHOD@bci}
 * (bci -1 in a native method); APP_FRAMES lists the application frames on the stack at the throw,
 * innermost first, as {@code DEPTH:METHOD@bci} separated by {@code |} (empty: none). Exceptions
 * are logged only when an application frame is on the stack.
 */
public final class JdiOracle {
    private final List<String> prefixes = new ArrayList<>();
    private final Map<Long, String> threadNames = new HashMap<>();
    private final Map<Long, BreakpointRequest> pendingCatch = new HashMap<>();
    private final Map<ReferenceType, Boolean> appTypes = new HashMap<>();
    private BufferedWriter log;
    private VirtualMachine vm;
    private boolean exits = true;

    public static void main(String[] args) throws Exception {
        System.exit(new JdiOracle().run(args));
    }

    private static void usage(String message) {
        System.err.println("JdiOracle: " + message);
        System.err.println("usage: JdiOracle --log FILE --cp CLASSPATH --app PREFIX [--app PREFIX ...] [--no-exits]"
                + " [--vm-option OPT ...] -- MAIN_CLASS [ARG ...]");
        System.exit(2);
    }

    private int run(String[] args) throws Exception {
        Path logPath = null;
        String classpath = null;
        List<String> vmOptions = new ArrayList<>();
        List<String> command = new ArrayList<>();
        int i = 0;
        for (; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--")) {
                i++;
                break;
            }
            if (a.equals("--no-exits")) {
                exits = false;
                continue;
            }
            if (i + 1 >= args.length) {
                usage("missing value after " + a);
            }
            switch (a) {
                case "--log" -> logPath = Path.of(args[++i]);
                case "--cp" -> classpath = args[++i];
                case "--app" -> prefixes.add(args[++i]);
                case "--vm-option" -> vmOptions.add(args[++i]);
                default -> usage("unknown option " + a);
            }
        }
        for (; i < args.length; i++) {
            command.add(args[i]);
        }
        if (logPath == null || classpath == null || prefixes.isEmpty() || command.isEmpty()) {
            usage("--log, --cp, --app and a main class are required");
        }

        LaunchingConnector connector = Bootstrap.virtualMachineManager().defaultConnector();
        if (!connector.name().equals("com.sun.jdi.CommandLineLaunch")) {
            usage("unexpected default connector " + connector.name());
        }
        Map<String, Connector.Argument> arguments = connector.defaultArguments();
        arguments.get("home").setValue(System.getProperty("java.home"));
        StringBuilder options = new StringBuilder("-cp " + quote(classpath));
        for (String option : vmOptions) {
            options.append(' ').append(quote(option));
        }
        arguments.get("options").setValue(options.toString());
        StringBuilder main = new StringBuilder();
        for (String word : command) {
            if (word.indexOf('"') >= 0) {
                usage("arguments may not contain '\"': " + word);
            }
            main.append(main.length() == 0 ? "" : " ").append(quote(word));
        }
        arguments.get("main").setValue(main.toString());
        arguments.get("suspend").setValue("true");

        try (BufferedWriter writer = Files.newBufferedWriter(logPath, StandardCharsets.UTF_8)) {
            log = writer;
            vm = connector.launch(arguments);
            Process process = vm.process();
            Thread out = pump(process.getInputStream(), System.out, "stdout");
            Thread err = pump(process.getErrorStream(), System.err, "stderr");
            eventLoop();
            out.join();
            err.join();
            int code = process.waitFor();
            line("END", Integer.toString(code));
            return code;
        }
    }

    /** A connector argument word: quoted when it holds white space (the connector splits on it). */
    private static String quote(String word) {
        return word.isEmpty() || word.chars().anyMatch(Character::isWhitespace) ? '"' + word + '"' : word;
    }

    private static Thread pump(InputStream from, OutputStream to, String name) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[8192];
            try {
                for (int n; (n = from.read(buffer)) > 0; ) {
                    to.write(buffer, 0, n);
                    to.flush();
                }
            } catch (IOException e) {
                // the process is gone
            }
        }, "pump-" + name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private void line(String... fields) throws IOException {
        log.write(String.join("\t", fields));
        log.write('\n');
    }

    // Requests -------------------------------------------------------------------------------

    private void enableRequests() {
        EventRequestManager manager = vm.eventRequestManager();
        for (String prefix : prefixes) {
            MethodEntryRequest entry = manager.createMethodEntryRequest();
            entry.addClassFilter(prefix + "*");
            entry.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
            entry.enable();
            if (exits) {
                MethodExitRequest exit = manager.createMethodExitRequest();
                exit.addClassFilter(prefix + "*");
                exit.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
                exit.enable();
            }
        }
        ExceptionRequest exceptions = manager.createExceptionRequest(null, true, true);
        exceptions.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
        exceptions.enable();
    }

    // Events ---------------------------------------------------------------------------------

    private void eventLoop() throws Exception {
        EventQueue queue = vm.eventQueue();
        boolean connected = true;
        while (connected) {
            EventSet set = queue.remove();
            // One entry or exit matched by the requests of two prefixes arrives twice in one set.
            Set<String> seen = new HashSet<>();
            for (Event event : set) {
                try {
                    if (event instanceof VMStartEvent) {
                        enableRequests();
                    } else if (event instanceof MethodEntryEvent e) {
                        if (seen.add("enter " + e.thread().uniqueID())) {
                            onEntry(e);
                        }
                    } else if (event instanceof MethodExitEvent e) {
                        if (seen.add("exit " + e.thread().uniqueID())) {
                            onExit(e);
                        }
                    } else if (event instanceof ExceptionEvent e) {
                        onException(e);
                    } else if (event instanceof BreakpointEvent e) {
                        onBreakpoint(e);
                    } else if (event instanceof VMDeathEvent) {
                        // the disconnect follows
                    } else if (event instanceof VMDisconnectEvent) {
                        connected = false;
                    }
                } catch (VMDisconnectedException e) {
                    connected = false;
                }
            }
            if (connected) {
                try {
                    set.resume();
                } catch (VMDisconnectedException e) {
                    connected = false;
                }
            }
        }
    }

    private boolean isApp(ReferenceType type) {
        return appTypes.computeIfAbsent(type, t -> {
            String name = t.name();
            if (name.indexOf('/') >= 0) {
                return false; // a hidden class
            }
            for (String prefix : prefixes) {
                if (name.startsWith(prefix)) {
                    return true;
                }
            }
            return false;
        });
    }

    private static String method(Method m) {
        return m.declaringType().name() + "." + m.name() + m.signature();
    }

    private static String location(Location l) {
        return method(l.method()) + "@" + l.codeIndex();
    }

    private String thread(ThreadReference thread) throws IOException {
        long id = thread.uniqueID();
        String tid = Long.toString(id);
        if (!threadNames.containsKey(id)) {
            String name = thread.name();
            threadNames.put(id, name);
            line("THREAD", tid, name);
        }
        return tid;
    }

    private void onEntry(MethodEntryEvent e) throws Exception {
        Method m = e.method();
        if (!isApp(m.declaringType())) {
            return;
        }
        ThreadReference thread = e.thread();
        String tid = thread(thread);
        List<StackFrame> frames = thread.frames();
        int appBelow = 0;
        for (int k = 1; k < frames.size(); k++) {
            if (isApp(frames.get(k).location().declaringType())) {
                appBelow++;
            }
        }
        line("ENTER", tid, Integer.toString(frames.size()), Integer.toString(appBelow), method(m));
    }

    private void onExit(MethodExitEvent e) throws Exception {
        Method m = e.method();
        if (!isApp(m.declaringType())) {
            return;
        }
        ThreadReference thread = e.thread();
        String tid = thread(thread);
        line("EXIT", tid, Integer.toString(thread.frameCount()), method(m));
    }

    private void onException(ExceptionEvent e) throws Exception {
        ThreadReference thread = e.thread();
        List<StackFrame> frames = thread.frames();
        StringBuilder app = new StringBuilder();
        for (int k = 0; k < frames.size(); k++) {
            Location l = frames.get(k).location();
            if (isApp(l.declaringType())) {
                app.append(app.length() == 0 ? "" : "|").append(frames.size() - k).append(':').append(location(l));
            }
        }
        if (app.length() == 0) {
            return; // the program's code is not involved
        }
        String tid = thread(thread);
        Location catchAt = e.catchLocation();
        line("THROW", tid, Integer.toString(frames.size()), e.exception().referenceType().name(),
                location(e.location()), catchAt == null ? "none" : location(catchAt), app.toString());
        if (catchAt != null) {
            BreakpointRequest previous = pendingCatch.remove(thread.uniqueID());
            if (previous != null) {
                // The last exception never reached its handler (it cannot happen; say so).
                line("LOST", tid, location(previous.location()));
                vm.eventRequestManager().deleteEventRequest(previous);
            }
            BreakpointRequest request = vm.eventRequestManager().createBreakpointRequest(catchAt);
            request.addThreadFilter(thread);
            request.addCountFilter(1);
            request.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
            request.enable();
            pendingCatch.put(thread.uniqueID(), request);
        }
    }

    private void onBreakpoint(BreakpointEvent e) throws Exception {
        ThreadReference thread = e.thread();
        BreakpointRequest request = pendingCatch.get(thread.uniqueID());
        if (request == null || !request.equals(e.request())) {
            return;
        }
        pendingCatch.remove(thread.uniqueID());
        vm.eventRequestManager().deleteEventRequest(request);
        line("CATCH", thread(thread), Integer.toString(thread.frameCount()), location(e.location()));
    }
}
