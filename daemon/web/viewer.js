// lidaremu live view: subscribes to the daemon's Foxglove WebSocket (foxglove.websocket.v1) and
// draws each foxglove.PointCloud coloured by reflectivity. ?sensor=NAME picks a sensor (default:
// the first advertised); ?ws=ws://HOST:PORT overrides the address the daemon reports.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

const status = document.getElementById('status');
const params = new URLSearchParams(location.search);

// Reflectivity 0..255 to a colour: dark blue (absorbing) through green to yellow and red
// (retroreflectors above 100), the Velodyne calibrated scale.
function reflectivityColour(r, out, at) {
  const t = Math.min(r, 255) / 255;
  const stops = [[0.0, [0.15, 0.2, 0.6]], [0.2, [0.1, 0.6, 0.9]], [0.4, [0.2, 0.85, 0.3]],
                 [0.6, [0.95, 0.9, 0.2]], [1.0, [1.0, 0.25, 0.2]]];
  let i = 1;
  while (i < stops.length - 1 && t > stops[i][0]) i++;
  const [t0, c0] = stops[i - 1];
  const [t1, c1] = stops[i];
  const f = Math.max(0, Math.min(1, (t - t0) / (t1 - t0)));
  for (let k = 0; k < 3; k++) out[at + k] = c0[k] + (c1[k] - c0[k]) * f;
}

const renderer = new THREE.WebGLRenderer({ antialias: false, preserveDrawingBuffer: true });
renderer.setPixelRatio(1);
renderer.setSize(innerWidth, innerHeight);
document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x101418);
const camera = new THREE.PerspectiveCamera(60, innerWidth / innerHeight, 0.1, 2000);
camera.up.set(0, 0, 1);  // the sensor frame: z up
camera.position.set(-25, -25, 30);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.set(5, 0, 0);
controls.update();
scene.add(new THREE.AxesHelper(2));
const grid = new THREE.GridHelper(100, 20, 0x2a3440, 0x1c242c);
grid.rotation.x = Math.PI / 2;
scene.add(grid);

const geometry = new THREE.BufferGeometry();
let capacity = 0;
const points = new THREE.Points(geometry,
    new THREE.PointsMaterial({ size: 2, sizeAttenuation: false, vertexColors: true }));
scene.add(points);

function ensureCapacity(n) {
  if (n <= capacity) return;
  capacity = Math.max(n, capacity * 2, 1024);
  geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(capacity * 3), 3));
  geometry.setAttribute('color', new THREE.BufferAttribute(new Float32Array(capacity * 3), 3));
}

function decodeBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

let frames = 0;
function showCloud(message, topic) {
  const fields = Object.fromEntries(message.fields.map((f) => [f.name, f.offset]));
  const bytes = decodeBase64(message.data);
  const view = new DataView(bytes.buffer);
  const stride = message.point_stride;
  const n = Math.floor(bytes.length / stride);
  ensureCapacity(n);
  const position = geometry.getAttribute('position');
  const colour = geometry.getAttribute('color');
  for (let i = 0; i < n; i++) {
    const at = i * stride;
    position.array[i * 3] = view.getFloat32(at + fields.x, true);
    position.array[i * 3 + 1] = view.getFloat32(at + fields.y, true);
    position.array[i * 3 + 2] = view.getFloat32(at + fields.z, true);
    reflectivityColour(view.getFloat32(at + fields.intensity, true), colour.array, i * 3);
  }
  position.needsUpdate = true;
  colour.needsUpdate = true;
  geometry.setDrawRange(0, n);
  geometry.computeBoundingSphere();
  frames++;
  status.dataset.points = String(n);
  status.dataset.frames = String(frames);
  status.textContent = `${topic}\n${n} points, frame ${frames}\ncolour: reflectivity`;
}

async function connect() {
  let url = params.get('ws');
  if (!url) {
    const config = await (await fetch('/view/config.json')).json();
    if (!config.port) {
      status.textContent = 'the daemon runs without a live view (--foxglove off)';
      return;
    }
    url = `ws://${location.hostname}:${config.port}`;
  }
  const socket = new WebSocket(url, ['foxglove.websocket.v1']);
  socket.binaryType = 'arraybuffer';
  const topics = new Map();  // subscription id -> topic
  let nextSubscription = 1;
  socket.onopen = () => { status.textContent = `connected to ${url}, waiting for a sensor`; };
  socket.onclose = () => {
    status.textContent = `disconnected from ${url}; retrying`;
    setTimeout(connect, 1000);
  };
  socket.onmessage = (event) => {
    if (typeof event.data === 'string') {
      const message = JSON.parse(event.data);
      if (message.op !== 'advertise' || topics.size > 0) return;
      const wanted = params.get('sensor');
      const channel = message.channels.find((c) => c.schemaName === 'foxglove.PointCloud' &&
          (!wanted || c.topic === `/lidaremu/${wanted}/points`));
      if (!channel) return;
      const id = nextSubscription++;
      topics.set(id, channel.topic);
      socket.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id, channelId: channel.id }] }));
      return;
    }
    const data = new DataView(event.data);
    if (data.getUint8(0) !== 1) return;  // message data
    const subscription = data.getUint32(1, true);
    const payload = new TextDecoder().decode(new Uint8Array(event.data, 13));
    showCloud(JSON.parse(payload), topics.get(subscription));
  };
}

addEventListener('resize', () => {
  camera.aspect = innerWidth / innerHeight;
  camera.updateProjectionMatrix();
  renderer.setSize(innerWidth, innerHeight);
});
renderer.setAnimationLoop(() => {
  controls.update();
  renderer.render(scene, camera);
});
connect();
