package io.dynnibal.training;

/**
 * What one training step did.
 *
 * @param step the 1-based step just taken
 * @param loss the batch's mean sampled-softmax loss before the update
 * @param learningRate the networks' rate used
 * @param maskedCandidates (query, candidate) pairs removed because the candidate was the query's
 *     own positive
 * @param embeddingRowsUpdated distinct embedding rows the step changed
 * @param gradientNorm the global gradient norm before clipping
 * @param clipped whether the gradient was scaled down to the clipping norm
 * @param millis wall time of the step
 */
public record StepResult(
    int step,
    float loss,
    float learningRate,
    int maskedCandidates,
    int embeddingRowsUpdated,
    float gradientNorm,
    boolean clipped,
    double millis) {}
