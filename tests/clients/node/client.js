// A client on kafkajs, driven by the conformance tests.
//
//   node client.js produce BOOTSTRAP TOPIC
//       writes the tests' twelve records: record i to partition i%3, key "k<i>", value "v<i>",
//       and for odd i the headers h="<i>" and n=""
//   node client.js group BOOTSTRAP TOPIC GROUP COUNT
//       joins GROUP, reads COUNT records (from the start when the group has no offsets),
//       commits each, leaves, and prints every record as a JSON line
//       {"partition", "offset", "key", "value", "headers": [[k, v], ...]}
//   node client.js txn BOOTSTRAP TOPIC TRANSACTIONAL_ID
//       three transactions of six records each, record i to partition i%3 with the value
//       "<outcome>-<i>": "committed" and "committed-again" are committed, "aborted" aborted
//   node client.js admin BOOTSTRAP TOPIC
//       creates TOPIC (two partitions, retention.ms=123456), describes its retention.ms once
//       its broker knows it, grows it to four partitions, deletes it and waits until it is
//       gone; prints "retention VALUE SOURCE" (the source as the protocol numbers it) and
//       "partitions N"
//
// The Schema Registry commands talk to the registry at URL with @kafkajs/confluent-schema-registry
// and print one JSON line:
//
//   node client.js sr-register URL SUBJECT AVRO_SCHEMA
//       registers the Avro schema under SUBJECT as the package does (it reads the subject's
//       compatibility first and, on a first registration, sets it to BACKWARD); prints {"id"}
//   node client.js sr-schema URL ID
//       prints the Avro schema of global id ID as the package parsed it: {"name", "schema"}
//   node client.js sr-id URL SUBJECT AVRO_SCHEMA
//       prints {"id"}: the id of the schema as SUBJECT has it (the registry's lookup)
//   node client.js sr-latest URL SUBJECT
//       prints {"id"}: the id of SUBJECT's latest version
//   node client.js sr-encode URL ID RECORD_JSON
//       encodes the record with the schema of id ID in Confluent's wire format; prints {"hex"}
//   node client.js sr-decode URL HEX
//       decodes HEX (Confluent's wire format) with the writer schema its id names; prints
//       {"record"}
//
// Every command connects as the environment says, as a client configured for production would:
// KAFKA_SECURITY_PROTOCOL (PLAINTEXT when unset, SSL, SASL_PLAINTEXT or SASL_SSL),
// KAFKA_SSL_CA_LOCATION (the PEM file of the CA that signed the broker's certificate),
// KAFKA_SASL_MECHANISM (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER) with
// KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD, or KAFKA_SASL_TOKEN for OAUTHBEARER.
//
// Any failure is printed on stderr and exits 1.
'use strict';

const fs = require('fs');
const { ConfigResourceTypes, Kafka, logLevel } = require('kafkajs');
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry');

const PARTITIONS = 3;

async function produce(kafka, topic) {
  const producer = kafka.producer();
  await producer.connect();
  for (let i = 0; i < 12; i++) {
    const message = { partition: i % PARTITIONS, key: `k${i}`, value: `v${i}` };
    if (i % 2 === 1) message.headers = { h: `${i}`, n: '' };
    await producer.send({ topic, messages: [message] });
  }
  await producer.disconnect();
}

async function group(kafka, topic, groupId, count) {
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    console.error(`failed: ${payload.error}`);
    process.exit(1);
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let seen = 0;
  let finish;
  const done = new Promise((resolve) => { finish = resolve; });
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      const headers = Object.entries(message.headers || {})
        .map(([k, v]) => [k, v === null ? null : v.toString()]);
      console.log(JSON.stringify({
        partition, offset: Number(message.offset),
        key: message.key === null ? null : message.key.toString(),
        value: message.value.toString(), headers,
      }));
      await consumer.commitOffsets([
        { topic, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
      seen += 1;
      if (seen >= count) finish();
    },
  });
  const timer = setTimeout(() => {
    console.error(`failed: ${seen} of ${count} records read`);
    process.exit(1);
  }, 60000);
  await done;
  clearTimeout(timer);
  await consumer.disconnect();
}

async function txn(kafka, topic, transactionalId) {
  const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (const outcome of ['committed', 'aborted', 'committed-again']) {
    const transaction = await producer.transaction();
    const messages = [];
    for (let i = 0; i < PARTITIONS * 2; i++) {
      messages.push({ partition: i % PARTITIONS, value: `${outcome}-${i}` });
    }
    await transaction.send({ topic, messages });
    if (outcome === 'aborted') await transaction.abort();
    else await transaction.commit();
  }
  await producer.disconnect();
}

// Retries `check` every 100 ms until it returns something true, for at most 30 s.
async function until(what, check) {
  const deadline = Date.now() + 30000;
  for (;;) {
    let error;
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      error = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${error}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function admin(kafka, topic) {
  const client = kafka.admin();
  await client.connect();
  await client.createTopics({ waitForLeaders: true, topics: [{
    topic, numPartitions: 2, replicationFactor: 1,
    configEntries: [{ name: 'retention.ms', value: '123456' }] }] });
  // Kafka's brokers learn of a new topic a moment after its controller has made it
  const entry = await until('the new topic\'s configs', async () => {
    const { resources } = await client.describeConfigs({ includeSynonyms: false, resources: [
      { type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms'] }] });
    return resources[0].configEntries.find((e) => e.configName === 'retention.ms');
  });
  console.log(`retention ${entry.configValue} ${entry.configSource}`);
  await client.createPartitions({ topicPartitions: [{ topic, count: 4 }] });
  const count = await until('four partitions', async () => {
    const { topics } = await client.fetchTopicMetadata({ topics: [topic] });
    return topics[0].partitions.length === 4 && 4;
  });
  console.log(`partitions ${count}`);
  await client.deleteTopics({ topics: [topic] });
  await until('the topic gone', async () => !(await client.listTopics()).includes(topic));
  await client.disconnect();
}

// The ssl and sasl settings of the Kafka client, from the KAFKA_* variables.
function security(env) {
  const protocol = env.KAFKA_SECURITY_PROTOCOL || 'PLAINTEXT';
  if (!['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'].includes(protocol)) {
    throw new Error(`KAFKA_SECURITY_PROTOCOL ${protocol} is not one this client knows`);
  }
  const settings = {};
  if (protocol.endsWith('SSL')) {
    settings.ssl = env.KAFKA_SSL_CA_LOCATION
      ? { ca: [fs.readFileSync(env.KAFKA_SSL_CA_LOCATION, 'utf8')] } : true;
  }
  if (protocol.startsWith('SASL_')) {
    const mechanism = (env.KAFKA_SASL_MECHANISM || '').toLowerCase();
    if (mechanism === 'oauthbearer') {
      const value = env.KAFKA_SASL_TOKEN;
      settings.sasl = { mechanism, oauthBearerProvider: async () => ({ value }) };
    } else if (['plain', 'scram-sha-256', 'scram-sha-512'].includes(mechanism)) {
      settings.sasl = { mechanism, username: env.KAFKA_SASL_USERNAME,
                        password: env.KAFKA_SASL_PASSWORD };
    } else {
      throw new Error(`KAFKA_SASL_MECHANISM ${env.KAFKA_SASL_MECHANISM} is not one this ` +
                      'client knows');
    }
  }
  return settings;
}

// The Schema Registry commands: each takes the registry's URL first.
const REGISTRY_COMMANDS = {
  'sr-register': async (registry, subject, schema) => {
    const { id } = await registry.register({ type: SchemaType.AVRO, schema }, { subject });
    return { id };
  },
  'sr-schema': async (registry, id) => {
    const type = await registry.getSchema(Number(id));
    return { name: type.name, schema: type.schema() };
  },
  'sr-id': async (registry, subject, schema) => ({
    id: await registry.getRegistryIdBySchema(subject, { type: SchemaType.AVRO, schema }),
  }),
  'sr-latest': async (registry, subject) => ({ id: await registry.getLatestSchemaId(subject) }),
  'sr-encode': async (registry, id, record) => ({
    hex: (await registry.encode(Number(id), JSON.parse(record))).toString('hex'),
  }),
  'sr-decode': async (registry, hex) => ({
    record: await registry.decode(Buffer.from(hex, 'hex')),
  }),
};

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  if (Object.hasOwn(REGISTRY_COMMANDS, command || '')) {
    const [url, ...args] = rest;
    const registry = new SchemaRegistry({ host: url, clientId: 'kafkajs-conformance' });
    console.log(JSON.stringify(await REGISTRY_COMMANDS[command](registry, ...args)));
    return;
  }
  const [bootstrap, topic, groupId, count] = rest;
  const kafka = new Kafka({ clientId: 'kafkajs-conformance', brokers: [bootstrap],
                            logLevel: logLevel.ERROR, ...security(process.env) });
  if (command === 'produce' && topic) return produce(kafka, topic);
  if (command === 'group' && count) return group(kafka, topic, groupId, Number(count));
  if (command === 'admin' && topic) return admin(kafka, topic);
  if (command === 'txn' && groupId) return txn(kafka, topic, groupId);
  throw new Error('usage: node client.js produce|group|txn|admin BOOTSTRAP TOPIC ' +
                  '[GROUP COUNT | TRANSACTIONAL_ID], or node client.js sr-... URL ... ' +
                  '(see client.js)');
}

main().then(() => process.exit(0), (err) => {
  console.error(`failed: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
