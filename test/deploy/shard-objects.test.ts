// biome-ignore-all lint/suspicious/noTemplateCurlyInString: terraform's ${...} interpolations are literal text here
/**
 * terraform's `shard_objects` (SLUICE_SHARD_OBJECTS of the runner) is validated to what
 * one part request may carry, as the runner's configuration is: `terraform plan` refuses a
 * value the runner would refuse at start (or whose parts the runners would refuse).
 */
import { describe, expect, it } from 'vitest';
import { checkShardObjects, loadTerraform, type Terraform } from '../../scripts/check-deploy.ts';
import { PART_MAX_OBJECTS } from '../../shared/runs/run-request.ts';

// biome-ignore lint/suspicious/noExplicitAny: terraform parsed to JSON, walked freely
type Json = Record<string, any>;

const shardObjects = (tf: Terraform): Json | undefined =>
  tf.raw.find((doc) => doc.variable?.shard_objects)?.variable.shard_objects[0];

describe('check:deploy shard_objects', () => {
  it('the terraform variable shard_objects has a validation to 1..PART_MAX_OBJECTS', async () => {
    const tf = await loadTerraform();
    const variable = shardObjects(tf);
    expect(variable, 'terraform declares shard_objects').toBeDefined();
    expect(variable!.validation, 'shard_objects has a validation block').toBeDefined();
    const condition = String(variable!.validation[0].condition);
    expect(condition).toContain('var.shard_objects >= 1');
    expect(condition).toContain(`var.shard_objects <= ${PART_MAX_OBJECTS}`);
    expect(checkShardObjects(tf).problems).toEqual([]);
  });

  it('fails without the validation, on a wider bound, or on a default outside it', async () => {
    const without = await loadTerraform();
    delete shardObjects(without)!.validation;
    expect(checkShardObjects(without).problems).toEqual([
      `variable shard_objects has no validation: give it 1 to ${PART_MAX_OBJECTS} (PART_MAX_OBJECTS, the objects one part request may carry)`,
    ]);

    const wider = await loadTerraform();
    shardObjects(wider)!.validation[0].condition =
      '${var.shard_objects >= 1 && var.shard_objects <= 10000 && floor(var.shard_objects) == var.shard_objects}';
    expect(checkShardObjects(wider).problems).toEqual([
      `variable shard_objects: its validation must allow 1 to ${PART_MAX_OBJECTS} (PART_MAX_OBJECTS), whole numbers only; it says "var.shard_objects >= 1 && var.shard_objects <= 10000 && floor(var.shard_objects) == var.shard_objects"`,
    ]);

    const fraction = await loadTerraform();
    shardObjects(fraction)!.validation[0].condition =
      `\${var.shard_objects >= 1 && var.shard_objects <= ${PART_MAX_OBJECTS}}`;
    expect(checkShardObjects(fraction).problems).toHaveLength(1);

    const big = await loadTerraform();
    shardObjects(big)!.default = 10_000;
    expect(checkShardObjects(big).problems).toEqual([
      `variable shard_objects: its default 10000 is outside 1 to ${PART_MAX_OBJECTS}`,
    ]);
  });
});
