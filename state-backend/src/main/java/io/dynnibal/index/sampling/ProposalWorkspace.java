package io.dynnibal.index.sampling;

import java.util.Arrays;

/**
 * {@link ClusterProposal}'s arrays, kept from one query to the next: a proposal made in a workspace
 * borrows them and holds until the workspace's next proposal. They grow to the largest partition
 * proposed over and are never shrunk. One thread at a time.
 */
public final class ProposalWorkspace {
  private int[] identity = new int[0];
  private double[] logWeights = new double[0];
  private double[] weights = new double[0];
  private long[] heap = new long[0];
  private ClusterProposal.Inside[] inside = new ClusterProposal.Inside[0];
  private ClusterProposal.Members members;

  /** {@code 0, 1, ..., n - 1} (and possibly more). */
  int[] identity(int n) {
    if (identity.length < n) {
      int from = identity.length;
      identity = Arrays.copyOf(identity, Math.max(n, 2 * from));
      for (int i = from; i < identity.length; i++) {
        identity[i] = i;
      }
    }
    return identity;
  }

  double[] logWeights(int n) {
    if (logWeights.length < n) {
      logWeights = new double[Math.max(n, 2 * logWeights.length)];
    }
    return logWeights;
  }

  double[] weights(int n) {
    if (weights.length < n) {
      weights = new double[Math.max(n, 2 * weights.length)];
    }
    return weights;
  }

  long[] heap(int n) {
    if (heap.length < n) {
      heap = new long[Math.max(n, 2 * heap.length)];
    }
    return heap;
  }

  /** At least {@code n} entries, the first {@code n} empty. */
  ClusterProposal.Inside[] inside(int n) {
    if (inside.length < n) {
      inside = new ClusterProposal.Inside[Math.max(n, 2 * inside.length)];
    } else {
      Arrays.fill(inside, 0, n, null);
    }
    return inside;
  }

  /** Scratch for gathering a cluster of at most {@code capacity} targets. */
  ClusterProposal.Members members(int capacity) {
    if (members == null || members.capacity() != capacity) {
      members = new ClusterProposal.Members(capacity);
    }
    return members;
  }
}
