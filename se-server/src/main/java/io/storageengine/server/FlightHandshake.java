package io.storageengine.server;

import java.util.Iterator;
import java.util.Optional;
import org.apache.arrow.flight.auth.ServerAuthHandler;

/**
 * Answers the Flight {@code Handshake} call, which clients such as the ADBC Flight SQL driver
 * send once on connect. There is no authentication yet: every handshake is accepted, whatever
 * payload the client sends, and answered with one empty token. Authentication hooks in here
 * (checking the client's payload in {@link #authenticate}); calls themselves are not checked
 * against the token ({@link #isValid} accepts any), since this handler is only used for the
 * handshake, not installed as a per-call interceptor.
 */
@SuppressWarnings("deprecation") // Flight's Handshake is served through this (deprecated) interface only.
final class FlightHandshake implements ServerAuthHandler {
  static final FlightHandshake ACCEPT_ALL = new FlightHandshake();

  private FlightHandshake() {}

  @Override
  public Optional<String> isValid(byte[] token) {
    return Optional.of("");
  }

  /**
   * Accepts the client. The payloads it sent are not read: Flight's iterator over them waits
   * for messages the client may never send, and nothing is checked yet.
   */
  @Override
  public boolean authenticate(ServerAuthSender outgoing, Iterator<byte[]> incoming) {
    outgoing.send(new byte[0]);
    return true;
  }
}
