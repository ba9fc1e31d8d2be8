package io.storageengine.reconcile;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * An HTTP/1.1 proxy in front of a REST catalog server that can lose the outcome of table
 * commits ({@code POST .../namespaces/{ns}/tables/{table}}), the way a gateway or a dropped
 * connection does. {@link Loss#AFTER_COMMIT_500} and {@link Loss#AFTER_COMMIT_RESET} forward the
 * commit (the server applies it) and then answer 500 or reset the connection instead of the
 * server's answer; {@link Loss#BEFORE_COMMIT_500} answers 500 without forwarding. Table loads
 * ({@code GET} of the same path) can be answered 500 too ({@link #failNextLoads}). Other
 * requests pass through unchanged.
 */
final class ResponseLosingProxy implements AutoCloseable {
  enum Loss { AFTER_COMMIT_500, AFTER_COMMIT_RESET, BEFORE_COMMIT_500 }

  private static final Pattern COMMIT = Pattern.compile(".*/namespaces/[^/]+/tables/[^/]+");
  /** Headers the JDK client sets itself, or that describe this hop only. */
  private static final Set<String> HOP = Set.of("host", "connection", "content-length", "expect", "upgrade",
      "transfer-encoding", "keep-alive", "te", "trailer", "proxy-connection");

  private final ServerSocket listener;
  private final URI upstream;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "response-losing-proxy");
    t.setDaemon(true);
    return t;
  });
  private final AtomicInteger toLose = new AtomicInteger();
  private final AtomicInteger loadsToFail = new AtomicInteger();
  private volatile Loss loss = Loss.AFTER_COMMIT_500;
  /** Commits the server received through this proxy. */
  final AtomicInteger commitsForwarded = new AtomicInteger();
  /** Commit outcomes this proxy hid from the client. */
  final AtomicInteger outcomesLost = new AtomicInteger();

  ResponseLosingProxy(URI upstream) throws IOException {
    this.upstream = upstream;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    threads.execute(this::acceptLoop);
  }

  String uri() {
    return "http://127.0.0.1:" + listener.getLocalPort();
  }

  /** The next {@code commits} table commits lose their outcome as {@code how}. */
  void loseNext(int commits, Loss how) {
    this.loss = how;
    toLose.set(commits);
  }

  /** The next {@code loads} table loads after the next lost commit are answered 500. */
  void failNextLoads(int loads) {
    loadsToFail.set(loads);
  }

  private volatile boolean lostOne;

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket s = listener.accept();
        threads.execute(() -> serve(s));
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(Socket socket) {
    try (socket) {
      InputStream in = new BufferedInputStream(socket.getInputStream());
      OutputStream out = socket.getOutputStream();
      while (true) {
        String requestLine = readLine(in);
        if (requestLine == null || requestLine.isEmpty()) {
          return;
        }
        String[] parts = requestLine.split(" ");
        String method = parts[0];
        String target = parts[1];
        List<String[]> headers = new ArrayList<>();
        long contentLength = 0;
        for (String line = readLine(in); line != null && !line.isEmpty(); line = readLine(in)) {
          int colon = line.indexOf(':');
          String name = line.substring(0, colon).trim();
          String value = line.substring(colon + 1).trim();
          if (name.equalsIgnoreCase("content-length")) {
            contentLength = Long.parseLong(value);
          }
          if (name.equalsIgnoreCase("transfer-encoding")) {
            throw new IOException("the test proxy does not take chunked request bodies");
          }
          headers.add(new String[] {name, value});
        }
        byte[] body = in.readNBytes((int) contentLength);
        String path = URI.create(target).getPath();
        boolean commit = "POST".equals(method) && COMMIT.matcher(path).matches();
        boolean lose = commit && toLose.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
        boolean load = "GET".equals(method) && COMMIT.matcher(path).matches();
        if (load && lostOne && loadsToFail.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0) {
          serverError(out);
          continue;
        }
        if (lose) {
          lostOne = true;
        }
        if (lose && loss == Loss.BEFORE_COMMIT_500) {
          outcomesLost.incrementAndGet();
          serverError(out);
          continue;
        }
        HttpResponse<byte[]> response = forward(method, target, headers, body);
        if (commit) {
          commitsForwarded.incrementAndGet();
        }
        if (lose) {
          outcomesLost.incrementAndGet();
          if (loss == Loss.AFTER_COMMIT_RESET) {
            socket.setSoLinger(true, 0); // close with a reset: the response never arrives
            return;
          }
          serverError(out);
          continue;
        }
        writeResponse(out, response.statusCode(), response.headers().map(), response.body());
      }
    } catch (IOException | InterruptedException e) {
      // the client went away or the test ended
    }
  }

  private HttpResponse<byte[]> forward(String method, String target, List<String[]> headers, byte[] body)
      throws IOException, InterruptedException {
    HttpRequest.Builder request = HttpRequest.newBuilder(upstream.resolve(target)).method(method,
        body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    for (String[] h : headers) {
      if (!HOP.contains(h[0].toLowerCase(Locale.ROOT))) {
        request.header(h[0], h[1]);
      }
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  private static void serverError(OutputStream out) throws IOException {
    byte[] body = ("{\"error\":{\"message\":\"the gateway lost the catalog's response\","
        + "\"type\":\"GatewayError\",\"code\":500}}").getBytes(StandardCharsets.UTF_8);
    writeResponse(out, 500, Map.of("Content-Type", List.of("application/json")), body);
  }

  private static void writeResponse(OutputStream out, int status, Map<String, List<String>> headers, byte[] body)
      throws IOException {
    StringBuilder head = new StringBuilder("HTTP/1.1 ").append(status).append(" -\r\n");
    for (Map.Entry<String, List<String>> h : headers.entrySet()) {
      if (h.getKey().startsWith(":") || HOP.contains(h.getKey().toLowerCase(Locale.ROOT))) {
        continue;
      }
      for (String v : h.getValue()) {
        head.append(h.getKey()).append(": ").append(v).append("\r\n");
      }
    }
    head.append("Content-Length: ").append(body.length).append("\r\n\r\n");
    out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
    out.write(body);
    out.flush();
  }

  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    for (int b = in.read(); b != -1; b = in.read()) {
      if (b == '\n') {
        String s = line.toString(StandardCharsets.ISO_8859_1);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
      }
      line.write(b);
    }
    return line.size() == 0 ? null : line.toString(StandardCharsets.ISO_8859_1);
  }

  @Override
  public void close() throws IOException {
    listener.close();
    threads.shutdownNow();
  }
}
