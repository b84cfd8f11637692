import { measureStorageGrowth } from '../bench/storage-growth.ts';
const r = await measureStorageGrowth({ slots: Number(process.argv[2] ?? 50000), burst: 100, probes: 3 });
console.log(process.env.SCRATCH_ANVIL_ARGS ?? 'default', JSON.stringify(r));
