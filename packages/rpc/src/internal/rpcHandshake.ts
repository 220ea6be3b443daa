import { Envelope, Errors } from "@kindling/protocol"
import * as Handshake from "./handshake.js"
import type { Peer } from "./rpcPeer.js"

/** What a handshake step does to its connection, carried out by the node. */
export interface HandshakeActions {
  readonly secretKey: CryptoKey | undefined
  readonly write: (peer: Peer, envelope: Envelope.Envelope) => unknown
  /** The dialler's side: the listener welcomed it. */
  readonly open: (peer: Peer) => void
  /** The listener's side: opens the connection and tells the dialler. */
  readonly welcome: (peer: Peer) => void
  readonly refuse: (
    peer: Peer,
    error: Errors.AuthenticationFailed | Errors.ProtocolVersionMismatch | Errors.FrameTooLarge
  ) => void
  readonly authFailed: (peer: Peer, reason: string) => void
}

export const onHandshake = (
  actions: HandshakeActions,
  peer: Peer,
  envelope: Extract<Envelope.Envelope, { _tag: "hello" | "challenge" | "proof" | "welcome" }>
) => {
  const { authFailed, open, refuse, secretKey, welcome, write } = actions
  // Both ends check the other's version: the listener in the hello, the dialler in the welcome.
  const refuseVersion = (peer: Peer, remote: number) =>
    refuse(
      peer,
      new Errors.ProtocolVersionMismatch({ peer: peer.identity.hostPort, local: Envelope.protocolVersion, remote })
    )
  switch (envelope._tag) {
    case "hello": {
      if (peer.direction !== "in" || peer.phase !== "awaitHello") return authFailed(peer, "unexpected hello")
      if (envelope.address !== null) peer.identity = envelope.address
      peer.purpose = envelope.purpose ?? "control"
      if (envelope.version !== Envelope.protocolVersion) return refuseVersion(peer, envelope.version)
      if (secretKey === undefined) {
        if (envelope.nonce !== null) {
          return authFailed(peer, "the peer expects a shared secret but this node has none")
        }
        return welcome(peer)
      }
      if (envelope.nonce === null) {
        return authFailed(peer, "this node requires a shared secret but the peer offered none")
      }
      const clientNonce = envelope.nonce
      const serverNonce = Handshake.makeNonce()
      peer.clientNonce = clientNonce
      peer.serverNonce = serverNonce
      peer.phase = "verifying"
      Handshake.serverProof(secretKey, clientNonce, serverNonce).then((proof) => {
        if (peer.phase !== "verifying") return
        peer.phase = "awaitProof"
        write(peer, { _tag: "challenge", nonce: serverNonce, proof })
      }, (error) => authFailed(peer, `cannot compute proof: ${String(error)}`))
      return
    }
    case "proof": {
      if (peer.direction !== "in" || peer.phase !== "awaitProof" || secretKey === undefined) {
        return authFailed(peer, "unexpected proof")
      }
      peer.phase = "verifying"
      Handshake.clientProof(secretKey, peer.clientNonce!, peer.serverNonce!).then((expected) => {
        if (peer.phase !== "verifying") return
        if (Handshake.sameBytes(expected, envelope.proof)) welcome(peer)
        else authFailed(peer, "the peer's proof does not match the shared secret")
      }, (error) => authFailed(peer, `cannot verify proof: ${String(error)}`))
      return
    }
    case "challenge": {
      if (peer.direction !== "out" || peer.phase !== "awaitChallenge" || secretKey === undefined) {
        return authFailed(peer, "unexpected challenge")
      }
      const serverNonce = envelope.nonce
      peer.phase = "verifying"
      Promise.all([
        Handshake.serverProof(secretKey, peer.clientNonce!, serverNonce),
        Handshake.clientProof(secretKey, peer.clientNonce!, serverNonce)
      ]).then(([expected, proof]) => {
        if (peer.phase !== "verifying") return
        if (!Handshake.sameBytes(expected, envelope.proof)) {
          return authFailed(peer, "the peer's proof does not match the shared secret")
        }
        peer.phase = "awaitWelcome"
        write(peer, { _tag: "proof", proof })
      }, (error) => authFailed(peer, `cannot verify proof: ${String(error)}`))
      return
    }
    case "welcome": {
      const expected = secretKey === undefined ? "awaitChallenge" : "awaitWelcome"
      if (peer.direction !== "out" || peer.phase !== expected) {
        return authFailed(
          peer,
          secretKey !== undefined && peer.phase === "awaitChallenge"
            ? "the peer did not authenticate itself"
            : "unexpected welcome"
        )
      }
      if (envelope.version !== Envelope.protocolVersion) return refuseVersion(peer, envelope.version)
      return open(peer)
    }
  }
}
