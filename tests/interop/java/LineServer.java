/*
 * The line mode of the interop helpers (ProtocolMessages, CoordinatorRecords,
 * MetadataRecords): one request per line of stdin, one answer per line of stdout, flushed
 * at once, so a test can drive one JVM case by case (conftest.py's JavaServer). A request
 * that throws is answered "err <exception class>: <message>", on one line.
 */

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

public final class LineServer {

    /** Answers one request line. */
    public interface Answer {
        String answer(String line) throws Exception;
    }

    private LineServer() {}

    public static void serve(Answer answer) throws IOException {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String result;
            try {
                result = answer.answer(line);
            } catch (Exception e) {
                result = "err " + e.getClass().getName() + ": "
                    + String.valueOf(e.getMessage()).replace('\n', ' ');
            }
            out.println(result);
            out.flush();
        }
    }
}
