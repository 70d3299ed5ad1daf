/*
 * Runs one of Kafka's command-line tools many times in one JVM, so a test that compares
 * dozens of commands pays for one JVM start, not dozens: ToolBatch <main class>
 * <commands file> <output directory>. Each line of the commands file is one command, its
 * arguments separated by tabs; command i leaves i.out, i.err and i.status (the status
 * Kafka's Exit.exit was called with, else 0) in the output directory. System.out and
 * System.err are swapped per command; Exit's procedures throw instead of exiting.
 */

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.apache.kafka.common.utils.Exit;

public final class ToolBatch {

    /** Thrown by Exit.exit and Exit.halt while a command runs. */
    private static final class Exited extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int status;

        Exited(int status) {
            super("exit " + status, null, false, false);
            this.status = status;
        }
    }

    private ToolBatch() {}

    public static void main(String[] args) throws Exception {
        Method main = Class.forName(args[0]).getMethod("main", String[].class);
        List<String> commands = Files.readAllLines(Path.of(args[1]), StandardCharsets.UTF_8);
        Path out = Path.of(args[2]);
        Exit.setExitProcedure((status, message) -> {
            throw new Exited(status);
        });
        Exit.setHaltProcedure((status, message) -> {
            throw new Exited(status);
        });
        PrintStream stdout = System.out;
        PrintStream stderr = System.err;
        for (int i = 0; i < commands.size(); i++) {
            String line = commands.get(i);
            String[] argv = line.isEmpty() ? new String[0] : line.split("\t", -1);
            ByteArrayOutputStream captured = new ByteArrayOutputStream();
            ByteArrayOutputStream capturedErr = new ByteArrayOutputStream();
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(capturedErr, true, StandardCharsets.UTF_8));
            int status = 0;
            try {
                main.invoke(null, (Object) argv);
            } catch (InvocationTargetException e) {
                if (e.getCause() instanceof Exited exited) {
                    status = exited.status;
                } else {
                    e.getCause().printStackTrace();
                    status = 1;
                }
            } finally {
                System.out.flush();
                System.err.flush();
                System.setOut(stdout);
                System.setErr(stderr);
            }
            Files.write(out.resolve(i + ".out"), captured.toByteArray());
            Files.write(out.resolve(i + ".err"), capturedErr.toByteArray());
            Files.writeString(out.resolve(i + ".status"), Integer.toString(status));
        }
    }
}
